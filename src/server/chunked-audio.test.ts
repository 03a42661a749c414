// A render in chunks with audio, on the scale-out project's PostgreSQL + Swift (S3), against the
// same composition rendered whole (issue 30: the join's audio mix failed in FFmpeg whenever two
// clips were mixed, so every chunked render of bench/compositions/scale-60s failed at the end).
// The composition is scale-60s in small: tones at the very start, across a chunk boundary,
// shorter than a frame, none in one chunk, and one in a last chunk shorter than the others, the
// mix padded with silence to the end. The chunked video's audio must decode to the whole render's samples
// and last exactly as long as its video.
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planChunks } from "../engine/stages/plan";
import { probeMedia } from "../engine/testing/probe";
import { decodeAudio, rms } from "../engine/testing/pcm";
import {
  api,
  queryServiceDatabase,
  startService,
  tempDir,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip } from "./testing/zip-builder";

const TONE = resolve(import.meta.dirname, "../../examples/with-audio/tone.wav");
// 11 s at 2 fps: 22 frames in segments of 2, three segments (3 s) to a chunk: chunks of
// 6/6/6/4 frames starting at 0, 3, 6 and 9 s.
const FPS = 2;
const SECONDS = 11;
const CHUNK_SECONDS = 3;
/**
 * tone.wav's level in the mix after its 50 ms fade-in: RMS 0.053 in its one channel, spread over
 * two at -3 dB each (FFmpeg's mono-to-stereo).
 */
const TONE_RMS = 0.053 / Math.SQRT2;

/** Where the tones sound: [start, end) in seconds, and their volume. */
const CLIPS = [
  { start: 0, end: 2, volume: 0.8 }, // at the very start
  { start: 1, end: 3, volume: 0.4 }, // over the first, ending on the chunk boundary at 3 s
  { start: 2.5, end: 4.5, volume: 0.6 }, // across the boundary at 3 s
  { start: 5.2, end: 5.3, volume: 1, mediaStart: 0.5, duration: 0.1 }, // shorter than a frame
  // nothing in the chunk [6, 9)
  // In the short last chunk, ending before the video does (the mix is padded with silence).
  { start: 10, end: 10.9, volume: 0.8, duration: 0.9 },
];

const COMPOSITION = `<!doctype html>
<html><head><meta charset="utf-8"><style>
  html, body { margin: 0; background: #102030; }
  #box { position: absolute; top: 400px; left: 0; width: 200px; height: 200px; background: #e0a020;
         animation: slide ${SECONDS}s linear forwards; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(800px); } }
</style></head>
<body>
  <div id="root" data-composition-id="main" data-width="1080" data-height="1080" data-duration="${SECONDS}">
    <div id="box"></div>
    <img id="lost" src="missing.png" alt="">
${CLIPS.map(
  (clip) =>
    `    <audio src="tone.wav" data-start="${clip.start}" data-volume="${clip.volume}"` +
    (clip.mediaStart !== undefined ? ` data-media-start="${clip.mediaStart}"` : "") +
    (clip.duration !== undefined ? ` data-duration="${clip.duration}"` : "") +
    ` preload="auto"></audio>`,
).join("\n")}
  </div>
</body></html>
`;

let dir: string;
let chunked: ServiceProcess;
let whole: ServiceProcess;

beforeAll(async () => {
  dir = await tempDir("svc-chunked-audio-");
  [chunked, whole] = await Promise.all([
    startService({
      dataDir: join(dir, "chunked"),
      jobs: 2,
      env: { SVC_SERVER_CHUNK_SECONDS: String(CHUNK_SECONDS) },
    }),
    startService({ dataDir: join(dir, "whole"), jobs: 1, env: { SVC_SERVER_MAX_CHUNKS: "1" } }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([chunked?.kill(), whole?.kill()]);
});

/** Uploads the project to `service`, renders it and downloads the video into the temp dir. */
async function renderOn(service: ServiceProcess, name: string) {
  const zip = buildZip([
    { name: "index.html", data: COMPOSITION, deflate: true },
    { name: "tone.wav", data: await readFile(TONE) },
  ]);
  const { assetId, complete } = await uploadProject(service, service.apiKey, zip);
  expect(complete.status).toBe(200);
  const submitted = await api(service, "POST", "/v3/svc/renders", {
    key: service.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, fps: FPS, quality: "draft" },
  });
  expect(submitted.status).toBe(201);
  const renderId = submitted.body.data.render_id as string;
  const record = await waitForTerminalRender(service, renderId, 240_000);
  const [row] = await queryServiceDatabase<{ chunk_count: number }>(
    service.dataDir,
    "select chunk_count from renders where id = ?",
    [renderId],
  );
  if (record.status !== "completed") return { record, chunkCount: row?.chunk_count, file: "" };
  const file = join(dir, `${name}.mp4`);
  const video = await fetch(record.video_url as string);
  expect(video.status).toBe(200);
  await writeFile(file, Buffer.from(await video.arrayBuffer()));
  return { record, chunkCount: row?.chunk_count, file };
}

describe("a render in chunks with audio", () => {
  it("mixes the same audio as the whole render, as long as its video, on PostgreSQL + S3, and records the page's warnings", async () => {
    const plan = planChunks(SECONDS * FPS, FPS, { chunkSeconds: CHUNK_SECONDS, maxChunks: 32 });
    expect(plan.map((chunk) => chunk.frameCount)).toEqual([6, 6, 6, 4]);

    const [inChunks, inOne] = await Promise.all([
      renderOn(chunked, "chunked"),
      renderOn(whole, "whole"),
    ]);
    expect(inChunks.chunkCount).toBe(plan.length);
    expect(inOne.chunkCount).toBe(1);
    // On failure, the render's own failure message is the assertion's message.
    expect(inChunks.record.status, inChunks.record.failure_message).toBe("completed");
    expect(inOne.record.status, inOne.record.failure_message).toBe("completed");
    // What the engine found about the page reaches the record, chunked (from chunk 0) or not.
    for (const { record } of [inChunks, inOne]) {
      expect(record.warnings).toContainEqual({
        code: "composition",
        message: expect.stringContaining("missing.png"),
        param: "project",
      });
    }

    for (const { file } of [inChunks, inOne]) {
      const info = await probeMedia(file);
      const video = info.streams.find((stream) => stream.type === "video");
      const audio = info.streams.find((stream) => stream.type === "audio");
      expect(video?.durationSeconds).toBeCloseTo(SECONDS, 6);
      expect(audio?.durationSeconds).toBeCloseTo(video!.durationSeconds!, 6);
    }

    const [chunkedSamples, wholeSamples] = await Promise.all([
      decodeAudio(inChunks.file),
      decodeAudio(inOne.file),
    ]);
    expect(chunkedSamples.length).toBe(wholeSamples.length);
    let largest = 0;
    for (let i = 0; i < wholeSamples.length; i++) {
      largest = Math.max(largest, Math.abs(chunkedSamples[i]! - wholeSamples[i]!));
    }
    expect(largest).toBeLessThan(1e-3);

    // And that audio is the composition's: each tone where it starts, silence where none sounds.
    const at = (from: number, to: number) => rms(chunkedSamples, from, to);
    expect(at(0.1, 0.9) / (TONE_RMS * 0.8)).toBeCloseTo(1, 1);
    expect(at(3.1, 4.4) / (TONE_RMS * 0.6)).toBeCloseTo(1, 1);
    expect(at(5.21, 5.29) / TONE_RMS).toBeCloseTo(1, 1);
    expect(at(10.1, 10.85) / (TONE_RMS * 0.8)).toBeCloseTo(1, 1);
    for (const [from, to] of [
      [4.55, 5.15],
      [5.35, 9.95],
      [10.95, 11],
    ] as const) {
      expect(at(from, to)).toBeLessThan(1e-3);
    }
  }, 300_000);
});
