// Captions on /v3 renders through the real service (issue 37): the caption file travels in the
// project zip; a missing or broken one is a 400 naming `captions.file` (and the line) before
// anything is queued or charged; a good one is burned into the video (decoded) and, asked for, is
// a soft subtitle track too.
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveFfprobe } from "../engine/ffmpeg/ffmpeg";
import { decodeFrame } from "../engine/testing/probe";
import {
  api,
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

beforeAll(async () => {
  dir = await tempDir();
  svc = await startService({ dataDir: join(dir, "data"), workers: 1 });
  const zip = buildZip([
    { name: "index.html", data: BLACK, deflate: true },
    { name: "subs/good.srt", data: "1\n00:00:00,000 --> 00:00:00,600\nHELLO\n", deflate: true },
    { name: "subs/bad.vtt", data: "WEBVTT\n\n00:00.000 --> 00:xx.500\nHi\n", deflate: true },
  ]);
  assetId = (await uploadProject(svc, svc.apiKey, zip)).assetId;
});

afterAll(async () => {
  await svc?.kill();
});

const submit = (captions: unknown) =>
  api(svc, "POST", "/v3/svc/renders", {
    key: svc.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, fps: 5, quality: "draft", captions },
  });

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
});
