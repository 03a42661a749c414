// checkComposition finds each problem of issue 28 point 4 on a fixture made for it
// (testing/check-fixtures/<name>), finds nothing on the examples, and a render of a fixture lists
// the same finding among its warnings.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FindingCode } from "../shared/findings";
import { checkComposition } from "./inspect/check";
import { renderComposition } from "./render";

const FIXTURES = resolve(import.meta.dirname, "testing/check-fixtures");
const EXAMPLES = resolve(import.meta.dirname, "../../examples");

describe("checkComposition", () => {
  const cases: Array<{
    fixture: string;
    code: FindingCode;
    severity: "error" | "warning";
    says: RegExp;
    allowNetwork?: boolean;
  }> = [
    {
      fixture: "no-root-timeline",
      code: "no-root-timeline",
      severity: "warning",
      says: /No GSAP timeline is registered for the root composition "main".*window\.__timelines\["main"\] = tl/,
    },
    {
      fixture: "random",
      code: "nondeterministic-random",
      severity: "warning",
      says: /Math\.random\(\) while frames are drawn \(\/index\.html, line \d+\)/,
    },
    {
      fixture: "random-at-start",
      code: "nondeterministic-random",
      severity: "warning",
      says: /Math\.random\(\) while the page starts \(\/index\.html, line \d+\), so each render, each parallel worker/,
    },
    {
      fixture: "clock",
      code: "nondeterministic-clock",
      severity: "warning",
      says: /reads the clock \(Date\.now\(\)\) while frames are drawn \(\/index\.html, line \d+\)/,
    },
    {
      fixture: "infinite-repeat",
      code: "infinite-repeat",
      severity: "error",
      says: /div#spinner\.box repeats forever \(repeat: -1\) in the timeline that gives the video its length, and the root has no data-duration, so the video would never end/,
    },
    {
      fixture: "infinite-repeat-outside-timeline",
      code: "infinite-repeat",
      severity: "warning",
      says: /div#spinner\.box repeats forever \(repeat: -1\) outside the registered timeline, so it runs on the clock/,
    },
    {
      fixture: "missing-font",
      code: "load-failed",
      severity: "error",
      says: /The font "Missing Sans" could not be loaded, so its text is drawn in a fallback font/,
    },
    {
      fixture: "missing-image",
      code: "load-failed",
      severity: "error",
      says: /The image \/images\/missing-logo\.png could not be loaded/,
    },
    {
      fixture: "missing-script",
      code: "load-failed",
      severity: "error",
      says: /The script \/scripts\/missing-effects\.js could not be loaded/,
    },
    {
      fixture: "network-refused",
      code: "network-refused",
      severity: "error",
      says: /asked for https:\/\/images\.example\.com\/logo\.png.*network access is off/,
      allowNetwork: false,
    },
    {
      fixture: "start-unknown-id",
      code: "bad-start-reference",
      severity: "warning",
      says: /div#next has data-start="intr \+ 0\.5", but no element has that id or composition id, so it starts at 0/,
    },
    {
      fixture: "start-cycle",
      code: "bad-start-reference",
      severity: "warning",
      says: /div#ping has data-start="pong", which comes back to itself through div#ping → div#pong → div#ping/,
    },
    {
      fixture: "zero-size",
      code: "zero-size",
      severity: "warning",
      says: /The clip div#banner\.clip is 1920×0 px .* draws nothing/,
    },
  ];

  it.each(cases)(
    "reports $code on the $fixture fixture, and nothing else",
    async ({ fixture, code, severity, says, allowNetwork }) => {
      const findings = await checkComposition(join(FIXTURES, fixture), {
        ...(allowNetwork !== undefined ? { allowNetwork } : {}),
      });
      expect(findings).toEqual([
        expect.objectContaining({ code, severity, message: expect.stringMatching(says) }),
      ]);
    },
  );

  it("has a fixture for every case, and a case for every fixture", async () => {
    const folders = (await readdir(FIXTURES, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.sort()).toEqual(cases.map((c) => c.fixture).sort());
  });

  it("reports a page whose script throws as an error finding, not by throwing", async () => {
    const project = await mkdtemp(join(tmpdir(), "svc-check-throws-"));
    try {
      await writeFile(
        join(project, "index.html"),
        `<div data-composition-id="main" data-width="1920" data-height="1080" data-duration="1"></div>
<script>window.__timelines["main"].play();</script>`,
      );
      expect(await checkComposition(project)).toEqual([
        expect.objectContaining({
          code: "page-error",
          severity: "error",
          message: expect.stringMatching(/script threw: .*play/),
        }),
      ]);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it("wants no root timeline when the root only hosts compositions with their own", async () => {
    const project = await mkdtemp(join(tmpdir(), "svc-check-hosts-"));
    try {
      await mkdir(join(project, "compositions"));
      await writeFile(
        join(project, "index.html"),
        `<div data-composition-id="main" data-width="1920" data-height="1080" data-duration="2">
  <div data-composition-id="card" data-composition-src="compositions/card.html"
    data-start="0" data-duration="2" style="position:absolute;inset:0"></div>
</div>
<script src="https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js"></script>
<script>gsap.set("body", { backgroundColor: "#123" });</script>`,
      );
      await writeFile(
        join(project, "compositions", "card.html"),
        `<template><div data-composition-id="card" style="position:absolute;inset:0">
  <div class="c" style="position:absolute;width:300px;height:200px;background:#f36"></div>
  <script>
    const tl = gsap.timeline({ paused: true });
    tl.from(".c", { x: -300, duration: 1 });
    window.__timelines["card"] = tl;
  </script>
</div></template>`,
      );
      expect(await checkComposition(project)).toEqual([]);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it("refuses an entry file that is not in the project, as a render does", async () => {
    await expect(
      checkComposition(join(FIXTURES, "clock"), { composition: "nope.html" }),
    ).rejects.toMatchObject({ code: "composition_not_found" });
  });

  it.each([
    "adaptive",
    "alpha-overlay",
    "gsap-heavy",
    "hello-world",
    "lower-third",
    "multi-scene",
    "with-audio",
  ])("finds nothing in examples/%s", async (name) => {
    expect(await checkComposition(join(EXAMPLES, name), { allowNetwork: false })).toEqual([]);
  });

  it("lists every folder of examples/ above", async () => {
    const folders = (await readdir(EXAMPLES, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.sort()).toEqual([
      "adaptive",
      "alpha-overlay",
      "gsap-heavy",
      "hello-world",
      "lower-third",
      "multi-scene",
      "with-audio",
    ]);
  });
});

describe("a render's warnings", () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), "svc-check-render-"));
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it("say in plain words what the check finds, once each", async () => {
    const result = await renderComposition({
      projectDir: join(FIXTURES, "random"),
      output: join(out, "random.mp4"),
      fps: 5,
      quality: "draft",
      workers: 2,
      thumbnail: false,
    });
    const said = result.warnings.filter((warning) => /Math\.random\(\)/.test(warning));
    expect(said).toEqual([
      expect.stringMatching(/^Page code calls Math\.random\(\) while frames are drawn/),
    ]);
  });

  it("name a request refused with network access off, not the failed load it causes", async () => {
    const result = await renderComposition({
      projectDir: join(FIXTURES, "network-refused"),
      output: join(out, "refused.mp4"),
      fps: 5,
      quality: "draft",
      allowNetwork: false,
      thumbnail: false,
    });
    expect(result.warnings).toEqual([
      expect.stringMatching(/asked for https:\/\/images\.example\.com\/logo\.png/),
    ]);
  });
});
