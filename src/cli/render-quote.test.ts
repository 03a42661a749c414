// `svc render --quote`: frames and credits exact, a positive estimate, and no file written.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { creditsFor } from "../shared/credits";
import { recordingIo } from "./io";
import { runRenderQuote } from "./render-quote";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-render-quote-test-"));
  await mkdir(join(dir, "project"));
  await writeFile(
    join(dir, "project", "index.html"),
    `<!doctype html><html><body style="margin:0;background:#123">
<div id="root" data-composition-id="main" data-width="1080" data-height="1080" data-duration="1.5"
 style="width:1080px;height:1080px"><div style="width:100px;height:100px;background:#fa0;animation:m 1.5s linear both"></div></div>
<style>@keyframes m{to{transform:translateX(900px)}}</style></body></html>`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("svc render --quote", () => {
  it("gives the frames, the credits of the charge rule and an estimate, and renders nothing", async () => {
    const io = recordingIo(process.env);
    const quote = await runRenderQuote(
      {
        dir: join(dir, "project"),
        composition: "index.html",
        fps: 10,
        quality: "draft",
        format: "gif",
        resolution: "1080p",
        workers: 1,
        json: true,
      },
      io,
    );
    expect(quote).toMatchObject({
      frames: 15,
      duration_seconds: 1.5,
      credits: creditsFor(1.5, "1080p"),
      workers: 1,
    });
    expect(quote.estimated_seconds).toBeGreaterThan(0);
    expect(quote.ms_per_frame).toBeGreaterThan(0);
    expect(JSON.parse(io.out())).toEqual(quote);
    expect(await readdir(join(dir, "project"))).toEqual(["index.html"]);
  });
});
