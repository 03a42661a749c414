import { describe, expect, it } from "vitest";
import {
  blockedFormats,
  blockedResolutions,
  cliCommand,
  estimatedCredits,
  jobTitle,
  parseFps,
  renderOptionsProblem,
  suggestedIgnoreLine,
} from "./render-plan";
import { renderCostMilli } from "../server/render/credits";
import { RESOLUTIONS } from "../shared/render-options";
import { DEFAULT_RENDER_CHOICES } from "./store";

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
        values: {},
        strictVariables: false,
      }),
    ).toBe("svc cloud render /p --fps 30 --quality standard --format mp4 --resolution 1080p");
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

  it("names a job after the project and its title variable", () => {
    expect(jobTitle("lower-third", { title: "Grace Hopper", size: 3 })).toBe(
      "lower-third · Grace Hopper",
    );
    expect(jobTitle("hello-world", { size: 3 })).toBe("hello-world");
  });

  it("writes no command for options that cannot render (no --fps NaN)", () => {
    expect(renderOptionsProblem({ ...DEFAULT_RENDER_CHOICES, fps: Number.NaN })).toBeDefined();
  });
});
