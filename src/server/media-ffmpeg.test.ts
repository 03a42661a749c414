// Every FFmpeg that reads a customer's file is a maintained release (issue 41). The service runs
// with a PATH whose first `ffmpeg` is a wrapper that writes the version of the FFmpeg it runs
// (the system's, found on PATH) and its arguments to a log, then runs it; the static 2018 build
// svc ships (@ffmpeg-installer) is not on PATH and never reaches the log. A project with an audio
// file and a sounding video is rendered whole and in chunks: the FFmpeg that read both files
// (the audio mix: finishWhole and joinChunks) must be in the log with version 5.1 or later, and
// svc's own frames (the segment encoders, fed on stdin) must not: those stay on the fast-starting
// build. Other FFmpeg runs of a service render (thumbnail, captions remux, GIF and picture
// outputs) read only files svc wrote.
import { execFileSync } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resolveFfmpeg, resolveMediaFfmpeg } from "../engine/ffmpeg/ffmpeg";
import {
  api,
  startService,
  tempDir,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip } from "./testing/zip-builder";

const TONE = resolve(import.meta.dirname, "../../examples/with-audio/tone.wav");
const SECONDS = 2;

const COMPOSITION = `<!doctype html>
<html><head><meta charset="utf-8"><style>html, body { margin: 0; background: #203040; }</style></head>
<body>
  <div id="root" data-composition-id="main" data-width="320" data-height="180" data-duration="${SECONDS}">
    <video src="clip.mp4" data-has-audio data-start="0" data-volume="0.5" playsinline
      style="width:160px;height:90px"></video>
    <audio src="tone.wav" data-start="0.5" data-volume="0.8" preload="auto"></audio>
  </div>
</body></html>
`;

let dir: string;
let log: string;
let whole: ServiceProcess;
let chunked: ServiceProcess;
let zip: Buffer;

beforeAll(async () => {
  dir = await tempDir("svc-media-ffmpeg-");
  const media = await resolveMediaFfmpeg();
  // A customer's video with sound, made by the system's FFmpeg.
  const clip = join(dir, "clip.mp4");
  execFileSync(media.path, [
    ...["-hide_banner", "-loglevel", "error", "-y"],
    ...["-f", "lavfi", "-i", `testsrc=size=160x90:rate=10:duration=${SECONDS}`],
    ...["-f", "lavfi", "-i", `sine=frequency=330:duration=${SECONDS}`],
    ...["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", clip],
  ]);
  zip = buildZip([
    { name: "index.html", data: COMPOSITION, deflate: true },
    { name: "tone.wav", data: await readFile(TONE) },
    { name: "clip.mp4", data: await readFile(clip) },
  ]);
  const bin = join(dir, "bin");
  await mkdir(bin);
  log = join(dir, "ffmpeg.log");
  await writeFile(
    join(bin, "ffmpeg"),
    `#!/bin/sh\nprintf '%s :: %s\\n' "$(${media.path} -version | head -n 1)" "$*" >> "${log}"\nexec ${media.path} "$@"\n`,
  );
  await chmod(join(bin, "ffmpeg"), 0o755);
  const env = { PATH: `${bin}:${process.env.PATH ?? ""}`, SVC_FFMPEG_PATH: "" };
  [whole, chunked] = await Promise.all([
    startService({ jobs: 1, env: { ...env, SVC_SERVER_MAX_CHUNKS: "1" } }),
    startService({
      jobs: 1,
      env: { ...env, SVC_SERVER_MAX_CHUNKS: "2", SVC_SERVER_CHUNK_SECONDS: "1" },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([whole?.kill(), chunked?.kill()]);
});

async function render(service: ServiceProcess): Promise<void> {
  const { assetId } = await uploadProject(service, service.apiKey, zip);
  const submitted = await api(service, "POST", "/v3/svc/renders", {
    key: service.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, fps: 2, quality: "draft" },
  });
  expect(submitted.status).toBe(201);
  const record = await waitForTerminalRender(service, submitted.body.data.render_id, 240_000);
  expect(record.status).toBe("completed");
}

/** The logged runs that read both customer files, with the version of the FFmpeg that ran. */
async function customerReads(): Promise<{ version: string; line: string }[]> {
  const lines = (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean);
  // Segment encoders read svc's frames on stdin: they must stay on the static build.
  expect(lines.filter((line) => /-i (-|pipe:0?)( |$)/.test(line))).toEqual([]);
  return lines
    .filter((line) => line.includes("tone.wav") && line.includes("clip.mp4"))
    .map((line) => ({ version: /^ffmpeg version (\S+)/.exec(line)?.[1] ?? line, line }));
}

function atLeast51(version: string): boolean {
  const [, major, minor] = (/^(\d+)\.(\d+)/.exec(version) ?? []).map(Number);
  return major! > 5 || (major === 5 && minor! >= 1);
}

it("the frames are encoded by the fast static build, customers' media by the one on PATH", async () => {
  expect((await resolveFfmpeg({ PATH: "" })).source).toBe("bundled");
  const media = await resolveMediaFfmpeg();
  expect(media.source).toBe("path");
});

it("a whole render's audio mix reads the customer's audio and video with FFmpeg 5.1 or later", async () => {
  await render(whole);
  const reads = await customerReads();
  expect(reads.length).toBeGreaterThanOrEqual(1);
  for (const read of reads) expect(atLeast51(read.version), read.line).toBe(true);
  process.stdout.write(
    `whole render: the customer's files were read by FFmpeg ${reads[0]!.version}\n`,
  );
}, 300_000);

it("a chunked render's join reads them with FFmpeg 5.1 or later too", async () => {
  const before = (await customerReads()).length;
  await render(chunked);
  const reads = (await customerReads()).slice(before);
  expect(reads.length).toBeGreaterThanOrEqual(1);
  for (const read of reads) expect(atLeast51(read.version), read.line).toBe(true);
  process.stdout.write(
    `chunked render: the customer's files were read by FFmpeg ${reads[0]!.version}\n`,
  );
}, 300_000);
