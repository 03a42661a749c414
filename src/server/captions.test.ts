// Captions on /v3 renders through the real service (issue 37): the caption file travels in the
// project zip; a missing or broken one is a 400 naming `captions.file` (and the line) before
// anything is queued or charged; a good one is burned into the video (decoded) and, asked for, is a
// soft subtitle track too, in a render cut into chunks (added at the join) and in every video of a
// render with several outputs, each stream holding the cues' words.
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveFfmpeg, resolveFfprobe } from "../engine/ffmpeg/ffmpeg";
import { decodeFrame } from "../engine/testing/probe";
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

let svc: ServiceProcess;
let dir: string;
let assetId: string;

const BLACK = `<!doctype html><html><body style="margin:0;background:#000">
<div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="0.6"></div></body></html>`;

/** 3 s: cut into 1 s chunks by this suite's service (the 0.6 s one renders whole). */
const LONG = BLACK.replace('data-duration="0.6"', 'data-duration="3"');
const THREE_CUES = [
  "1\n00:00:00,000 --> 00:00:01,000\nFirst words",
  "2\n00:00:01,000 --> 00:00:02,000\nSecond words",
  "3\n00:00:02,000 --> 00:00:03,000\nLast words",
].join("\n\n");

beforeAll(async () => {
  dir = await tempDir();
  svc = await startService({
    dataDir: join(dir, "data"),
    jobs: 2,
    // Fixed 1 s chunks, so the 3 s composition is rendered in three and joined.
    env: {
      SVC_SERVER_MAX_CHUNKS: "8",
      SVC_SERVER_CHUNK_SECONDS: "1",
      SVC_SERVER_MIN_CHUNK_FRAMES: "1",
    },
  });
  const zip = buildZip([
    { name: "index.html", data: BLACK, deflate: true },
    { name: "long.html", data: LONG, deflate: true },
    { name: "subs/three.srt", data: THREE_CUES, deflate: true },
    { name: "subs/good.srt", data: "1\n00:00:00,000 --> 00:00:00,600\nHELLO\n", deflate: true },
    { name: "subs/bad.vtt", data: "WEBVTT\n\n00:00.000 --> 00:xx.500\nHi\n", deflate: true },
  ]);
  assetId = (await uploadProject(svc, svc.apiKey, zip)).assetId;
});

afterAll(async () => {
  await svc?.kill();
});

const submit = (captions: unknown, more: Record<string, unknown> = {}) =>
  api(svc, "POST", "/v3/svc/renders", {
    key: svc.apiKey,
    body: {
      project: { type: "asset_id", asset_id: assetId },
      fps: 5,
      quality: "draft",
      captions,
      ...more,
    },
  });

async function download(url: string, name: string): Promise<string> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  const file = join(dir, name);
  await writeFile(file, Buffer.from(await response.arrayBuffer()));
  return file;
}

/** The file's subtitle streams: codec of each, and the first one's cues as SRT text. */
async function subtitles(file: string): Promise<{ codecs: string[]; text: string }> {
  const ffprobe = (await resolveFfprobe()).path;
  const codecs = execFileSync(ffprobe, [
    ...["-v", "error", "-select_streams", "s", "-show_entries", "stream=codec_name"],
    ...["-of", "csv=p=0", file],
  ])
    .toString()
    .trim()
    .split("\n")
    .filter(Boolean);
  if (codecs.length === 0) return { codecs, text: "" };
  const ffmpeg = (await resolveFfmpeg()).path;
  const text = execFileSync(ffmpeg, ["-v", "error", "-i", file, "-map", "0:s:0", "-f", "srt", "-"])
    .toString()
    .replace(/\r/g, "");
  return { codecs, text };
}

/** The cue lines of an SRT: its words, without numbers, times or the font tags FFmpeg adds. */
const cueWords = (srt: string) =>
  srt
    .replace(/<[^>]+>/g, "")
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^\d+$/.test(line) && !line.includes("-->"));

describe("captions on /v3 renders", () => {
  it("refuses a missing, broken or badly styled caption file before queueing", async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ file: "subs/none.srt" }, "captions.file", /no caption file "subs\/none.srt"/],
      [{ file: "subs/bad.vtt" }, "captions.file", /Line 3: "00:xx.500" is not a time/],
      [{ file: "../x.srt" }, "captions.file", /inside the project/],
      [{ file: "subs/good.srt", style: "fancy" }, "captions.style", /one of clean/],
      [{ file: "subs/good.srt", look: { color: "red;x" } }, "captions.look.color", /CSS colour/],
      [{ cues: [{ start: 1, end: 0.5, text: "Hi" }] }, "captions.cues[0].end", /end after/],
      [{ style: "band" }, "captions.file", /either a file in the project or cues/],
    ];
    for (const [captions, param, message] of cases) {
      const answer = await submit(captions);
      expect(answer.status, JSON.stringify(captions)).toBe(400);
      expect(answer.body.error).toMatchObject({ code: "invalid_parameter", param });
      expect(answer.body.error.message).toMatch(message);
    }
    const list = await api(svc, "GET", "/v3/svc/renders", { key: svc.apiKey });
    expect(list.body.data).toEqual([]);
  });

  it("burns the captions in and adds a soft track", async () => {
    const answer = await submit({ file: "subs/good.srt", style: "band", soft_track: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const record = await waitForTerminalRender(svc, answer.body.data.render_id);
    expect(record.status, JSON.stringify(record)).toBe("completed");
    const response = await fetch(record.video_url);
    const file = join(dir, "captions.mp4");
    await writeFile(file, Buffer.from(await response.arrayBuffer()));
    const frame = await decodeFrame(file, 1);
    let lit = 0;
    for (let at = 0; at < frame.data.length; at += 4) {
      if (frame.data[at]! + frame.data[at + 1]! + frame.data[at + 2]! > 300) lit++;
    }
    expect(lit).toBeGreaterThan(500);
    const ffprobe = (await resolveFfprobe()).path;
    const codecs = execFileSync(ffprobe, [
      ...["-v", "error", "-select_streams", "s", "-show_entries", "stream=codec_name"],
      ...["-of", "csv=p=0", file],
    ]).toString();
    expect(codecs.trim()).toBe("mov_text");
  });

  it("adds the soft track to a render cut into chunks, at the join", async () => {
    const answer = await submit(
      { file: "subs/three.srt", style: "clean", soft_track: true },
      { composition: "long.html" },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const renderId = answer.body.data.render_id as string;
    const record = await waitForTerminalRender(svc, renderId, 240_000);
    expect(record.status, JSON.stringify(record)).toBe("completed");
    const [row] = await queryServiceDatabase<{ chunk_count: number }>(
      join(dir, "data"),
      "SELECT chunk_count FROM renders WHERE id = ?",
      [renderId],
    );
    expect(row!.chunk_count).toBe(3);
    const file = await download(record.video_url, "chunked.mp4");
    const { codecs, text } = await subtitles(file);
    expect(codecs).toEqual(["mov_text"]);
    expect(cueWords(text)).toEqual(["First words", "Second words", "Last words"]);
    expect(text).toContain("00:00:01,000 --> 00:00:02,000");
  });

  it("adds the soft track to every video of a render with several outputs (mov_text, WebVTT)", async () => {
    const answer = await submit(
      { file: "subs/good.srt", soft_track: true },
      { outputs: [{}, { format: "webm", aspect_ratio: "9:16" }] },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const record = await waitForTerminalRender(svc, answer.body.data.render_id, 240_000);
    expect(record.status, JSON.stringify(record)).toBe("completed");
    const outputs = record.outputs as Array<{ url: string }>;
    expect(outputs).toHaveLength(2);
    const mp4 = await subtitles(await download(outputs[0]!.url, "several-0.mp4"));
    expect(mp4.codecs).toEqual(["mov_text"]);
    expect(cueWords(mp4.text)).toEqual(["HELLO"]);
    const webm = await subtitles(await download(outputs[1]!.url, "several-1.webm"));
    expect(webm.codecs).toEqual(["webvtt"]);
    expect(cueWords(webm.text)).toEqual(["HELLO"]);
  });
});
