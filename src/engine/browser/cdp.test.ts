// Every browser command has a bound: a page that stops answering (a script that never returns)
// fails the render with an error naming the command, instead of hanging it until its job times
// out, and the render still cleans up after itself. A real browser on a real page.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserCommandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_SECONDS } from "./cdp";
import { EngineError } from "../errors";
import { renderComposition } from "../render";

let scratch: string;
let renderTemp: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-cdp-test-"));
  renderTemp = join(scratch, "tmp");
  await mkdir(renderTemp);
  process.env.TMPDIR = renderTemp;
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("the browser command timeout", () => {
  it("comes from SVC_BROWSER_TIMEOUT_SECONDS, and a bad value says what to set", () => {
    expect(browserCommandTimeoutMs({})).toBe(DEFAULT_COMMAND_TIMEOUT_SECONDS * 1000);
    expect(browserCommandTimeoutMs({ SVC_BROWSER_TIMEOUT_SECONDS: "2.5" })).toBe(2500);
    for (const bad of ["0", "-3", "soon"]) {
      let error: unknown;
      try {
        browserCommandTimeoutMs({ SVC_BROWSER_TIMEOUT_SECONDS: bad });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe("invalid_options");
      expect((error as EngineError).message).toContain(`SVC_BROWSER_TIMEOUT_SECONDS is "${bad}"`);
    }
  });

  it(
    "fails a render whose page stops answering, naming the command, and cleans up",
    { timeout: 120_000 },
    async () => {
      const projectDir = join(scratch, "spins");
      await mkdir(projectDir, { recursive: true });
      // Frame 5 (0.5 s) runs a timer that never returns: the page's main thread is blocked for good.
      await writeFile(
        join(projectDir, "index.html"),
        `<!doctype html><html><body style="margin:0;background:#000">
<div id="root" data-composition-id="main" data-width="160" data-height="90" data-duration="1"
 style="position:relative;width:160px;height:90px;background:#246"></div>
<script>setTimeout(() => { for (;;) {} }, 500);</script></body></html>`,
      );
      // Long enough for every other command on a loaded machine; the stuck one never answers.
      process.env.SVC_BROWSER_TIMEOUT_SECONDS = "10";
      let error: unknown;
      try {
        await renderComposition({
          projectDir,
          output: join(scratch, "out", "spins.mp4"),
          fps: 10,
          quality: "draft",
          thumbnail: false,
          allowNetwork: false,
        });
      } catch (caught) {
        error = caught;
      } finally {
        delete process.env.SVC_BROWSER_TIMEOUT_SECONDS;
      }
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe("timeout");
      expect((error as EngineError).message).toMatch(
        /^The browser stopped answering: Runtime\.evaluate got no reply within 10 s/,
      );
      expect((error as EngineError).params.command).toBe("Runtime.evaluate");
      // The render's work dir and the browser's profile are gone: the browser was closed.
      expect((await readdir(renderTemp)).filter((name) => name.startsWith("svc-"))).toEqual([]);
    },
  );
});
