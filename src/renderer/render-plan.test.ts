import { describe, expect, it } from "vitest";
import {
  blockedFormats,
  blockedResolutions,
  cliCommand,
  estimatedCredits,
  filesSummary,
  queuedRenderSettingsFrom,
  outputsOf,
  plannedCredits,
  posterTimeOf,
  tickedSizes,
  queuedRenderTitle,
  parseFps,
  renderOptionsProblem,
  suggestedIgnoreLine,
} from "./render-plan";
import { renderCostMilli } from "../server/render/credits";
import { RESOLUTIONS } from "../shared/render-options";
import { DEFAULT_RENDER_CHOICES } from "./store";

const WIDE = { aspectRatio: "16:9", duration: 5 } as const;

describe("render plan", () => {
  it("refuses webm and mov at 4k, with the shared schema's reason", () => {
    expect([...blockedFormats("4k").keys()]).toEqual(["webm", "mov", "gif", "png-sequence"]);
    expect(blockedFormats("4k").get("webm")).toMatch(/4k cannot be rendered as webm/);
    expect(blockedFormats("1080p").size).toBe(0);
    expect([...blockedResolutions("mov").keys()]).toEqual(["4k"]);
    expect(blockedResolutions("mp4").size).toBe(0);
  });

  it("reports an fps out of range", () => {
    expect(renderOptionsProblem({ ...DEFAULT_RENDER_CHOICES, fps: 0 })).toMatch(/fps/);
    expect(renderOptionsProblem(DEFAULT_RENDER_CHOICES)).toBeUndefined();
  });

  it("estimates credits per second, 4k at one and a half times", () => {
    expect(estimatedCredits(4, "1080p")).toBe(4);
    expect(estimatedCredits(4, "4k")).toBe(6);
    expect(estimatedCredits(1.2, "1080p")).toBe(2);
    expect(estimatedCredits(0.01, "4k")).toBe(1.5);
    expect(estimatedCredits(undefined, "4k")).toBeUndefined();
  });

  it("estimates exactly what the service charges", () => {
    for (const seconds of [0.01, 0.2, 1, 1.2, 2.0000001, 4, 59.5, 3600]) {
      for (const resolution of RESOLUTIONS) {
        expect(estimatedCredits(seconds, resolution)! * 1000).toBe(
          renderCostMilli(seconds, resolution),
        );
      }
    }
  });

  it("writes the equivalent CLI command, quoting what the shell would split", () => {
    expect(
      cliCommand({
        dir: "/home/ada/my project",
        composition: "intro.html",
        render: { ...DEFAULT_RENDER_CHOICES, fps: 24, aspectRatio: "1:1" },
        facts: WIDE,
        values: { title: "Ada's talk" },
        strictVariables: true,
      }),
    ).toBe(
      "svc cloud render '/home/ada/my project' --composition intro.html --fps 24 --quality standard" +
        " --format mp4 --resolution 1080p --aspect-ratio 1:1" +
        ` --variables '{"title":"Ada'\\''s talk"}' --strict-variables`,
    );
    expect(
      cliCommand({
        dir: "/p",
        composition: "index.html",
        render: DEFAULT_RENDER_CHOICES,
        facts: WIDE,
        values: {},
        strictVariables: false,
      }),
    ).toBe("svc cloud render /p --fps 30 --quality standard --format mp4 --resolution 1080p");
  });

  it("turns ticked sizes and extras into one render's outputs, the composition's size first", () => {
    const render = {
      ...DEFAULT_RENDER_CHOICES,
      sizes: ["1:1", "9:16", "16:9"] as const,
      gif: true,
      poster: true,
      posterTime: 2.5,
    };
    const ticked = { ...render, sizes: [...render.sizes] };
    expect(tickedSizes(ticked, "16:9")).toEqual(["16:9", "9:16", "1:1"]);
    expect(outputsOf(ticked, WIDE)).toEqual([
      { aspect_ratio: "16:9" },
      { aspect_ratio: "9:16" },
      { aspect_ratio: "1:1" },
      { format: "gif", aspect_ratio: "16:9" },
      { still: { time: 2.5, format: "png" }, aspect_ratio: "16:9" },
    ]);
    expect(queuedRenderSettingsFrom(ticked, WIDE).outputs).toHaveLength(5);
    // 4 videos of 5 s and a still (one started second): the service's charge lines added up.
    expect(plannedCredits(ticked, WIDE)).toBe(4 * 5 + 1);
    expect(filesSummary(ticked, WIDE)).toBe("3 videos, a GIF and a poster picture");
    expect(
      cliCommand({
        dir: "/p",
        composition: "index.html",
        render: ticked,
        facts: WIDE,
        values: {},
        strictVariables: false,
      }),
    ).toBe(
      "svc cloud render /p --fps 30 --quality standard --format mp4 --resolution 1080p --also 9:16,1:1,gif,still@2.5",
    );
    // Nothing ticked beyond the composition's own size: one file, no outputs.
    expect(outputsOf(DEFAULT_RENDER_CHOICES, WIDE)).toBeUndefined();
    expect(queuedRenderSettingsFrom(DEFAULT_RENDER_CHOICES, WIDE)).not.toHaveProperty("outputs");
    expect(plannedCredits(DEFAULT_RENDER_CHOICES, WIDE)).toBe(5);
    // One other size alone is still an output: the page adapts to it.
    expect(outputsOf({ ...DEFAULT_RENDER_CHOICES, sizes: ["9:16"] }, WIDE)).toEqual([
      { aspect_ratio: "9:16" },
    ]);
    // The poster defaults to the middle of the video.
    expect(posterTimeOf({ ...DEFAULT_RENDER_CHOICES, poster: true }, 5)).toBe(2.5);
  });

  it("refuses a poster at or after the end and a GIF faster than 50 fps, in the panel's words", () => {
    expect(
      renderOptionsProblem({ ...DEFAULT_RENDER_CHOICES, poster: true, posterTime: 5 }, WIDE),
    ).toMatch(/poster's time must be before the end of the video \(5 s\)/);
    expect(renderOptionsProblem({ ...DEFAULT_RENDER_CHOICES, gif: true, fps: 60 }, WIDE)).toMatch(
      /^The GIF plays at most 50 fps/,
    );
    expect(
      renderOptionsProblem(
        { ...DEFAULT_RENDER_CHOICES, sizes: ["9:16", "1:1"], poster: true },
        WIDE,
      ),
    ).toBeUndefined();
  });

  it("suggests ignoring a large file's top folder", () => {
    expect(suggestedIgnoreLine("footage/raw/take1.mov")).toBe("footage/");
    expect(suggestedIgnoreLine("big.mp4")).toBe("big.mp4");
  });
});

describe("frames per second as typed", () => {
  it("takes a whole number in range and refuses letters, blanks and out-of-range rates in words", () => {
    expect(parseFps("25")).toEqual({ fps: 25 });
    expect(parseFps(" 60 ")).toEqual({ fps: 60 });
    expect(parseFps("3o")).toEqual({
      problem:
        "“3o” is not a number of frames per second: type a whole number from 1 to 240, e.g. 24, 25, 30, 50, 60.",
    });
    expect(parseFps("")).toMatchObject({
      problem: expect.stringMatching(/^Type the frames per second/),
    });
    expect(parseFps("29.97")).toMatchObject({ problem: expect.stringContaining("not a number") });
    expect(parseFps("500")).toMatchObject({
      problem: expect.stringMatching(/^500 .* out of range/),
    });
  });

  it("names a queued render after the project and its title variable", () => {
    expect(queuedRenderTitle("lower-third", { title: "Grace Hopper", size: 3 })).toBe(
      "lower-third · Grace Hopper",
    );
    expect(queuedRenderTitle("hello-world", { size: 3 })).toBe("hello-world");
  });

  it("writes no command for options that cannot render (no --fps NaN)", () => {
    expect(renderOptionsProblem({ ...DEFAULT_RENDER_CHOICES, fps: Number.NaN })).toBeDefined();
  });
});
