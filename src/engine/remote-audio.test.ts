// Audio a page plays from a URL (an <audio>, or a sounding <video>, outside the project) is mixed
// like a project file: svc downloads it first, because the static FFmpeg it ships dies of SIGSEGV
// on any input URL with a host name (found on the reference's kinetic-type example, whose video
// sits on S3: the render failed at the mix with "FFmpeg failed: exit null"). It downloads only
// what the render's page could reach (issue 41): with the network closed, a listener on loopback
// counts no hit, and an allowed address cannot redirect the mix elsewhere.
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinChunks } from "./chunks";
import { runFfmpeg, SegmentEncoder } from "./ffmpeg/encode";
import { resolveFfmpeg } from "./ffmpeg/ffmpeg";
import { decodeAudio, rms } from "./testing/pcm";

const SECONDS = 1;
let scratch: string;
let segment: string;
let server: Server;
let origin: string;
/** Requests the listener got, by path. */
const hits: string[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-remote-audio-"));
  const ffmpegPath = (await resolveFfmpeg()).path;
  const tone = join(scratch, "tone.wav");
  await runFfmpeg(ffmpegPath, [
    ...["-v", "error", "-f", "lavfi", "-i", `sine=f=440:d=${SECONDS}`, tone],
  ]);
  const jpeg = join(scratch, "picture.jpg");
  await runFfmpeg(ffmpegPath, [
    ...["-v", "error", "-f", "lavfi", "-i", "color=c=0x336699:s=64x64", "-frames:v", "1", jpeg],
  ]);
  segment = join(scratch, "segment.mp4");
  const encoder = new SegmentEncoder({
    ffmpegPath,
    output: segment,
    fps: 10,
    format: "mp4",
    quality: "draft",
    imageFormat: "jpeg",
    frames: 10,
    size: { width: 64, height: 64 },
  });
  await encoder.write(await readFile(jpeg));
  for (let i = 1; i < 10; i++) await encoder.write(null);
  await encoder.finish();
  const wav = await readFile(tone);
  server = createServer((request, response) => {
    hits.push(request.url ?? "");
    if (request.url === "/tone.wav") response.writeHead(200).end(wav);
    else if (request.url === "/moved.wav") {
      // To the same file by another name of this machine: another origin.
      response.writeHead(302, { location: `http://127.0.0.1:${port()}/tone.wav` }).end();
    } else response.writeHead(404).end();
  });
  // By host name, not 127.0.0.1: a name is what the static FFmpeg could not look up.
  await new Promise<void>((done) => server.listen(0, "localhost", done));
  const address = server.address() as { port: number };
  origin = `http://localhost:${address.port}`;
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
  await rm(scratch, { recursive: true, force: true });
});

function port(): number {
  return (server.address() as { port: number }).port;
}

function clip(source: string) {
  return { source, start: 0, duration: null, mediaStart: 0, volume: 1 };
}

/** Joins the test segment to `name` with the audio at `url`, under `allowNetwork`. */
async function joinWithAudio(
  name: string,
  url: string,
  allowNetwork: Parameters<typeof joinChunks>[0]["allowNetwork"],
): Promise<string> {
  const output = join(scratch, name);
  await joinChunks({
    segmentFiles: [segment],
    output,
    format: "mp4",
    durationSeconds: SECONDS,
    audio: [clip(url)],
    allowNetwork,
  });
  return output;
}

describe("audio from a URL", () => {
  it("is downloaded and mixed into the output like a file in the project", async () => {
    const output = await joinWithAudio("out.mp4", `${origin}/tone.wav`, true);
    const samples = await decodeAudio(output);
    // The tone, not silence: FFmpeg's sine source is at 1/8 amplitude (RMS 0.088).
    expect(rms(samples, 0.1, 0.9)).toBeGreaterThan(0.05);
  });

  it("that cannot be fetched fails the render naming the URL", async () => {
    const missing = `${origin}/gone.wav`;
    const failure = joinWithAudio("missing.mp4", missing, true);
    await expect(failure).rejects.toMatchObject({
      code: "page_error",
      message: `The composition's audio ${missing} could not be downloaded: HTTP 404`,
    });
  });

  it("is not downloaded when the render's network is closed: the listener counts no hit", async () => {
    hits.length = 0;
    const url = `${origin}/tone.wav`;
    const failure = joinWithAudio("closed.mp4", url, false);
    await expect(failure).rejects.toMatchObject({
      code: "page_error",
      message: `The composition's audio ${url} was not downloaded: this render may not reach that address.`,
      hint: "Put the file in the project and point the page at it.",
    });
    expect(hits).toEqual([]);
  });

  it("from an allowed origin does not follow a redirect to another one", async () => {
    hits.length = 0;
    const url = `${origin}/moved.wav`;
    const failure = joinWithAudio("redirected.mp4", url, { origins: [origin] });
    await expect(failure).rejects.toMatchObject({
      code: "page_error",
      message: `The composition's audio ${url} was not downloaded: it redirects to http://127.0.0.1:${port()}/tone.wav, which this render may not reach.`,
    });
    // The allowed address was asked; the one it pointed to was not.
    expect(hits).toEqual(["/moved.wav"]);
  });

  it("from an allowed origin is mixed like any other", async () => {
    const output = await joinWithAudio("allowed.mp4", `${origin}/tone.wav`, { origins: [origin] });
    expect(rms(await decodeAudio(output), 0.1, 0.9)).toBeGreaterThan(0.05);
  });
});
