// The page runtime in real Chromium: pages are served from memory through request routing,
// the runtime is installed exactly as the engine installs it, and every assertion reads what the
// page shows (positions, visibility, text) after `__svc.seek(t)`.
import { describe, expect, it } from "vitest";
import type { MediaSource } from "./types";
import {
  ORIGIN,
  html,
  open,
  POLL_MS,
  seek,
  translateX,
  usePageBrowser,
  visibility,
  wav,
  webm,
} from "../testing/runtime-page";

usePageBrowser();

describe("page runtime", () => {
  it("drives Date, performance.now, requestAnimationFrame and timers from the seek time", async () => {
    const page = await open(
      {
        "/index.html": html(`
          <div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="5">
            <p id="raf"></p><p id="timer"></p><p id="cancelled">no</p>
          </div>
          <script>
            const loop = (ts) => { document.getElementById("raf").textContent = String(ts); requestAnimationFrame(loop); };
            requestAnimationFrame(loop);
            const id = requestAnimationFrame(() => { document.getElementById("cancelled").textContent = "yes"; });
            cancelAnimationFrame(id);
            setTimeout(() => { document.getElementById("timer").textContent = "fired at " + performance.now(); }, 1000);
          </script>`),
      },
      { epochMs: 1_000_000 },
    );
    expect(await page.evaluate(() => [Date.now(), performance.now()])).toEqual([1_000_000, 0]);
    expect(await page.textContent("#timer")).toBe("");

    await seek(page, 2.5);
    expect(
      await page.evaluate(() => [Date.now(), new Date().getTime(), performance.now()]),
    ).toEqual([1_002_500, 1_002_500, 2500]);
    expect(await page.textContent("#raf")).toBe("2500");
    expect(await page.textContent("#timer")).toBe("fired at 1000");
    expect(await page.textContent("#cancelled")).toBe("no");

    await seek(page, 0.5);
    expect(await page.evaluate(() => performance.now())).toBe(500);
    expect(await page.textContent("#raf")).toBe("500");
    // Other forms of Date are untouched.
    expect(await page.evaluate(() => new Date(0).toISOString())).toBe("1970-01-01T00:00:00.000Z");
    expect(await page.evaluate(() => new Date() instanceof Date)).toBe(true);
  });

  it("seeks a GSAP timeline exactly, backwards too, and takes the duration from it", async () => {
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360">
           <div id="box" style="width:10px;height:10px;background:red"></div>
         </div>
         <script>
           const tl = gsap.timeline({ paused: true });
           tl.to("#box", { x: 400, duration: 4, ease: "none" });
           window.__timelines = window.__timelines || {};
           window.__timelines["main"] = tl;
         </script>`,
        `<script src="/gsap.min.js"></script>`,
      ),
    });
    const info = await page.evaluate(() => window.__svc!.info());
    expect(info).toMatchObject({ compositionId: "main", width: 640, height: 360, duration: 4 });
    expect(await page.evaluate(() => window.__svc!.duration)).toBe(4);
    for (const t of [0, 1, 3, 0.5, 2.25, 4]) {
      await seek(page, t);
      const [x] = await translateX(page, "#box");
      expect(x).toBeCloseTo(100 * t, 3);
    }
  });

  it("seeks CSS animations and WAAPI animations exactly", async () => {
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="4">
           <div id="css"></div><div id="waapi"></div>
         </div>
         <script>
           document.getElementById("waapi").animate(
             [{ transform: "translateX(0px)" }, { transform: "translateX(300px)" }],
             { duration: 3000, easing: "linear", fill: "forwards" });
         </script>`,
        `<style>
           @keyframes slide { from { transform: translateX(0px) } to { transform: translateX(200px) } }
           #css { animation: slide 2s linear; width: 10px; height: 10px }
         </style>`,
      ),
    });
    for (const [t, css, waapi] of [
      [1, 100, 100],
      [0.5, 50, 50],
      [1.75, 175, 175],
      [2.5, 0, 250],
      [3.5, 0, 300],
      [0, 0, 0],
    ] as const) {
      await seek(page, t);
      expect((await translateX(page, "#css"))[0]).toBeCloseTo(css, 3);
      expect((await translateX(page, "#waapi"))[0]).toBeCloseTo(waapi, 3);
    }
  });

  it("shows a clip only inside [start, start + duration), so adjacent scenes never overlap", async () => {
    // (A stylesheet that fails to load must not hold the page back either.)
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="4">
           <div id="a" class="clip" data-start="0" data-duration="2">A</div>
           <div id="b" class="clip" data-start="2" data-duration="2">B</div>
           <div id="c" class="clip" data-start="1">C</div>
         </div>`,
        `<link rel="stylesheet" href="/missing.css">`,
      ),
    });
    const expected: Array<[number, string, string, string]> = [
      [0, "visible", "hidden", "hidden"],
      [1, "visible", "hidden", "visible"],
      [1.999, "visible", "hidden", "visible"],
      [2, "hidden", "visible", "visible"],
      [3.999, "hidden", "visible", "visible"],
      [4, "hidden", "hidden", "visible"],
      [0.5, "visible", "hidden", "hidden"],
    ];
    for (const [t, a, b, c] of expected) {
      await seek(page, t);
      expect(await visibility(page, "#a, #b, #c"), `t=${t}`).toEqual([a, b, c]);
    }
  });

  it("binds variables to text, src and CSS properties before page scripts run", async () => {
    const schema = JSON.stringify([
      { id: "title", type: "string", label: "Title", default: "Hello" },
      { id: "accent", type: "color", label: "Accent", default: "#ff0000" },
      { id: "count", type: "number", label: "Count", default: 3 },
      { id: "show", type: "boolean", label: "Show", default: true },
      { id: "logo", type: "image", label: "Logo", default: "/a.png" },
    ]);
    const page = await open(
      {
        "/index.html": html(
          `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="2">
             <h1 data-var-text="title">Placeholder</h1>
             <img id="logo" data-var-src="logo" src="/placeholder.png">
             <div id="swatch" style="width:10px;height:10px;background:var(--accent)"></div>
           </div>
           <script>
             window.seenText = document.querySelector("h1").textContent;
             window.seenVariables = window.svc.getVariables();
           </script>`,
          "",
          `data-composition-variables='${schema}'`,
        ),
        "/a.png": null,
        "/b.png": Buffer.from(
          "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
          "base64",
        ),
      },
      { variables: { title: "World", show: false, logo: "/b.png", extra: 1 } },
    );
    const state = await page.evaluate(() => {
      const root = document.getElementById("root")!;
      return {
        text: document.querySelector("h1")!.textContent,
        seenText: (window as unknown as { seenText: string }).seenText,
        seenVariables: (window as unknown as { seenVariables: unknown }).seenVariables,
        variables: window.svc!.getVariables(),
        raw: window.__svcVariables,
        src: document.getElementById("logo")!.getAttribute("src"),
        accent: root.style.getPropertyValue("--accent"),
        show: root.style.getPropertyValue("--show"),
        count: root.style.getPropertyValue("--count"),
        background: getComputedStyle(document.getElementById("swatch")!).backgroundColor,
        info: window.__svc!.info(),
      };
    });
    const merged = {
      title: "World",
      accent: "#ff0000",
      count: 3,
      show: false,
      logo: "/b.png",
      extra: 1,
    };
    expect(state).toMatchObject({
      text: "World",
      seenText: "World",
      seenVariables: merged,
      variables: merged,
      raw: { title: "World", show: false, logo: "/b.png", extra: 1 },
      src: "/b.png",
      accent: "#ff0000",
      show: "0",
      count: "3",
      background: "rgb(255, 0, 0)",
    });
    expect(JSON.parse(state.info.variablesJson!)).toHaveLength(5);
    // Root-level variable issues are reported by the engine, which validates before the page opens.
    expect(state.info.warnings).toEqual([]);
  });

  it("mounts nested compositions two deep with their own variables, start offsets and held end state", async () => {
    const card = html(`
      <template>
        <div data-composition-id="card" data-width="320" data-height="90"
             data-composition-variables='[{"id":"name","type":"string","label":"Name","default":"Nobody"},{"id":"tone","type":"color","label":"Tone","default":"#00ff00"}]'>
          <style>.name { color: var(--tone); }</style>
          <span class="name" data-var-text="name"></span>
          <div class="bar" style="width:10px;height:10px"></div>
          <div class="dot-host" data-composition-id="dot" data-composition-src="compositions/dot.html"
               data-start="1" data-width="100" data-height="20"></div>
          <script>
            const tl = gsap.timeline({ paused: true });
            tl.to(".bar", { x: 100, duration: 1, ease: "none" });
            window.__timelines = window.__timelines || {};
            window.__timelines["card"] = tl;
            document.querySelector(".name").dataset.seen = JSON.stringify(svc.getVariables());
          </script>
        </div>
      </template>`);
    const dot = html(`
      <template>
        <div data-composition-id="dot" data-width="100" data-height="20">
          <div class="dot" style="width:5px;height:5px"></div>
          <script>
            const tl = gsap.timeline({ paused: true });
            tl.to(".dot", { x: 50, duration: 2, ease: "none" });
            window.__timelines["dot"] = tl;
          </script>
        </div>
      </template>`);
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="10">
           <div id="first" data-composition-id="card" data-composition-src="compositions/card.html"
                data-start="2" data-duration="5" data-width="320" data-height="90"
                data-variable-values='{"name":"Ada","bogus":1}'></div>
           <div id="second" data-composition-id="card" data-composition-src="compositions/card.html"
                data-start="4" data-width="320" data-height="90"
                data-variable-values='{"name":"Grace","tone":"#0000ff"}'></div>
         </div>
         <script>const tl = "the page's own tl";</script>`,
        `<script src="/gsap.min.js"></script>`,
      ),
      "/compositions/card.html": card,
      "/compositions/dot.html": dot,
    });

    const names = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLElement>(".name")).map((e) => ({
        text: e.textContent,
        seen: JSON.parse(e.dataset.seen ?? "null") as unknown,
        color: getComputedStyle(e).color,
      })),
    );
    expect(names).toEqual([
      { text: "Ada", seen: { name: "Ada", tone: "#00ff00", bogus: 1 }, color: "rgb(0, 255, 0)" },
      { text: "Grace", seen: { name: "Grace", tone: "#0000ff" }, color: "rgb(0, 0, 255)" },
    ]);

    // [t, visibility of #first/#second, bar x of each, dot x of each]
    const frames: Array<[number, string[], number[], number[]]> = [
      [1, ["hidden", "hidden"], [0, 0], [0, 0]],
      [2.5, ["visible", "hidden"], [50, 0], [0, 0]],
      [3.5, ["visible", "hidden"], [100, 0], [12.5, 0]],
      [5, ["visible", "visible"], [100, 100], [50, 0]],
      [6.5, ["visible", "visible"], [100, 100], [50, 37.5]],
      [7, ["hidden", "visible"], [100, 100], [50, 50]],
      [20, ["hidden", "visible"], [100, 100], [50, 50]],
      [2.25, ["visible", "hidden"], [25, 0], [0, 0]],
    ];
    for (const [t, shown, bars, dots] of frames) {
      await seek(page, t);
      expect(await visibility(page, "#first, #second"), `t=${t}`).toEqual(shown);
      const barX = await translateX(page, ".bar");
      const dotX = await translateX(page, ".dot");
      bars.forEach((x, i) => expect(barX[i], `bar ${i} at t=${t}`).toBeCloseTo(x, 3));
      dots.forEach((x, i) => expect(dotX[i], `dot ${i} at t=${t}`).toBeCloseTo(x, 3));
    }
    expect(await page.evaluate(() => window.__svc!.info())).toMatchObject({
      duration: 10,
      warnings: ["compositions/card.html: bogus: is not declared by the composition (undeclared)"],
    });
  });

  it("reports an error when there is no composition root or a sub-composition is missing", async () => {
    let page = await open({ "/index.html": html(`<div>nothing here</div>`) }, { waitReady: false });
    await page.waitForFunction(() => window.__svc?.error, undefined, { polling: POLL_MS });
    expect(await page.evaluate(() => window.__svc!.error)).toContain("data-composition-id");
    expect(await page.evaluate(() => window.__svc!.ready)).toBe(false);

    page = await open(
      {
        "/index.html": html(
          `<div data-composition-id="main" data-width="640" data-height="360" data-duration="2">
             <div data-composition-id="gone" data-composition-src="compositions/gone.html"></div>
           </div>`,
        ),
      },
      { waitReady: false },
    );
    await page.waitForFunction(() => window.__svc?.error, undefined, { polling: POLL_MS });
    expect(await page.evaluate(() => window.__svc!.error)).toMatch(/compositions\/gone\.html.*404/);

    page = await open(
      {
        "/index.html": html(
          `<div data-composition-id="main" data-width="640" data-height="360"></div>`,
        ),
      },
      { waitReady: false },
    );
    await page.waitForFunction(() => window.__svc?.error, undefined, { polling: POLL_MS });
    expect(await page.evaluate(() => window.__svc!.error)).toContain("no duration");
  });

  it("names the image and the font it is still waiting for", async () => {
    const page = await open(
      {
        "/index.html": html(
          `<div data-composition-id="main" data-width="640" data-height="360" data-duration="2">
             <img src="/img/never.png">
           </div>`,
          `<style>@font-face { font-family: "Brand"; src: url(/fonts/brand.woff2) }</style>`,
        ),
        "/img/never.png": null,
        "/fonts/brand.woff2": null,
      },
      { waitReady: false },
    );
    await page.waitForFunction(
      () => window.__svc?.waitingFor.includes("image /img/never.png"),
      undefined,
      { polling: POLL_MS },
    );
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => [window.__svc!.ready, window.__svc!.waitingFor])).toEqual([
      false,
      expect.arrayContaining(["image /img/never.png", 'font "Brand"']),
    ]);
  });

  it("waits for the images styles use, hidden and on pseudo-elements, but not for url(#id)", async () => {
    const page = await open(
      {
        "/index.html": html(
          `<div data-composition-id="main" data-width="640" data-height="360" data-duration="2">
             <div class="backdrop"></div>
             <div class="later" style="display: none"></div>
             <p class="mark">text</p>
             <svg width="10" height="10"><mask id="m"><rect width="10" height="10" fill="white"/></mask></svg>
             <div style="width: 10px; height: 10px; mask-image: url(#m)"></div>
           </div>`,
          `<style>
             .backdrop { width: 100px; height: 100px; background: linear-gradient(#000, #fff), url(/img/backdrop.png) }
             .later { background-image: url("/img/later.png") }
             .mark::before { content: url(/img/mark.png) }
           </style>`,
        ),
        "/img/backdrop.png": null,
        "/img/later.png": null,
        "/img/mark.png": null,
      },
      { waitReady: false },
    );
    const expected = ["image /img/backdrop.png", "image /img/later.png", "image /img/mark.png"];
    await page.waitForFunction(
      (names) => names.every((name) => window.__svc?.waitingFor.includes(name)),
      expected,
      { polling: POLL_MS },
    );
    expect(await page.evaluate(() => [window.__svc!.ready, window.__svc!.waitingFor])).toEqual([
      false,
      expect.arrayContaining(expected),
    ]);
    expect(
      await page.evaluate(() => window.__svc!.waitingFor.some((name) => name.includes("#"))),
    ).toBe(false);
  });

  it("lists audio with offsets on the root timeline, nested offsets included", async () => {
    const page = await open({
      "/index.html": html(
        `<div data-composition-id="main" data-width="640" data-height="360" data-duration="10">
           <audio src="/music.wav" data-start="1" data-volume="0.5"></audio>
           <div data-composition-id="scene" data-composition-src="compositions/scene.html" data-start="2" data-duration="3"></div>
         </div>`,
      ),
      "/compositions/scene.html": html(
        `<template><div>
           <audio src="voice.wav" data-start="0.5" data-media-start="0.25" data-duration="1"></audio>
           <audio src="long.wav" data-start="1"></audio>
         </div></template>`,
      ),
      "/music.wav": wav(0.5),
      "/voice.wav": wav(0.5),
      "/long.wav": wav(0.5),
    });
    const media = await page.evaluate(() => window.__svc!.media());
    expect(media).toEqual<MediaSource[]>([
      {
        kind: "audio",
        src: `${ORIGIN}/music.wav`,
        start: 1,
        duration: null,
        mediaStart: 0,
        volume: 0.5,
      },
      {
        kind: "audio",
        src: `${ORIGIN}/voice.wav`,
        start: 2.5,
        duration: 1,
        mediaStart: 0.25,
        volume: 1,
      },
      { kind: "audio", src: `${ORIGIN}/long.wav`, start: 3, duration: 2, mediaStart: 0, volume: 1 },
    ]);
  });

  it("seeks videos to their media time and shows them only inside their window", async () => {
    const page = await open({
      "/index.html": html(
        `<div data-composition-id="main" data-width="640" data-height="360" data-duration="5">
           <video id="v" muted src="/clip.webm" data-start="1" data-duration="2" data-media-start="0.5"></video>
         </div>`,
      ),
      "/clip.webm": webm(),
    });
    const state = () =>
      page.evaluate(() => {
        const video = document.getElementById("v") as HTMLVideoElement;
        return {
          time: video.currentTime,
          seeking: video.seeking,
          paused: video.paused,
          visibility: getComputedStyle(video).visibility,
        };
      });
    await seek(page, 2);
    expect(await state()).toMatchObject({ seeking: false, paused: true, visibility: "visible" });
    expect((await state()).time).toBeCloseTo(1.5, 3);
    await seek(page, 1.25);
    expect((await state()).time).toBeCloseTo(0.75, 3);
    await seek(page, 0.5);
    expect((await state()).visibility).toBe("hidden");
    await seek(page, 3);
    expect((await state()).visibility).toBe("hidden");
    expect(await page.evaluate(() => window.__svc!.media())).toEqual([]);
  });

  it("does not wait on a video that failed to load", async () => {
    // The reference's play-mode example ships with src="__VIDEO_SRC__" (a template to fill in):
    // each frame waited for a seek of it that could never finish.
    const page = await open({
      "/index.html": html(
        `<div data-composition-id="main" data-width="640" data-height="360" data-duration="5">
           <video id="v" muted src="/missing.webm" data-start="0" data-duration="4"></video>
         </div>`,
      ),
    });
    for (const t of [1, 2]) {
      expect(await page.evaluate((time) => window.__svc!.seek(time), t)).toBe(false);
    }
    const { warnings } = await page.evaluate(() => window.__svc!.info());
    expect(warnings.join("\n")).not.toContain("never finished seeking");
  });

  it("runs a HyperFrames-style sub-composition unchanged", async () => {
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="film" data-start="0" data-width="640" data-height="360">
           <div id="el-1" class="clip" data-composition-src="compositions/intro.html"
                data-start="1" data-track-index="1" data-width="640" data-height="360"></div>
         </div>
         <script>
           window.__timelines = window.__timelines || {};
           const tl = gsap.timeline({ paused: true });
           tl.to("#root", { opacity: 1, duration: 6 });
           window.__timelines["film"] = tl;
         </script>`,
        `<script src="https://cdn.jsdelivr.net/npm/gsap@3.14.2/dist/gsap.min.js"></script>`,
      ).replace("https://cdn.jsdelivr.net/npm/gsap@3.14.2/dist", ""),
      "/compositions/intro.html": html(`
        <template id="intro-template">
          <div data-composition-id="intro" data-width="640" data-height="360" data-duration="2">
            <h1 id="title" style="width:50px">Intro</h1>
            <script src="https://cdn.example.invalid/gsap@3.14.2/dist/gsap.min.js"></script>
            <script>
              window.__timelines = {};
              const tl = gsap.timeline({ paused: true });
              tl.fromTo("#title", { x: 0 }, { x: 200, duration: 2, ease: "none" });
              window.__timelines["intro"] = tl;
            </script>
          </div>
        </template>`),
    });
    expect(await page.evaluate(() => window.__svc!.info().duration)).toBe(6);
    for (const [t, x, shown] of [
      [0.5, 0, "hidden"],
      [2, 100, "visible"],
      [3.5, 200, "hidden"],
      [1.5, 50, "visible"],
    ] as const) {
      await seek(page, t);
      expect((await translateX(page, "#title"))[0], `t=${t}`).toBeCloseTo(x, 3);
      expect(await visibility(page, "#el-1"), `t=${t}`).toEqual([shown]);
    }
  });

  it("plays CSS transitions started during the video over the following frames", async () => {
    const page = await open({
      "/index.html": html(
        `<div data-composition-id="main" data-width="640" data-height="360" data-duration="4">
           <div id="fade" style="transition: transform 1s linear"></div>
           <div id="chase" style="transition: all 0.2s linear"></div>
         </div>
         <script>
           const tl = gsap.timeline({ paused: true });
           tl.call(() => document.getElementById("fade").classList.add("moved"), null, 1);
           tl.to("#chase", { x: 300, duration: 2, ease: "none" }, 0);
           window.__timelines = { main: tl };
         </script>`,
        `<script src="/gsap.min.js"></script><style>.moved { transform: translateX(100px) }</style>`,
      ),
    });
    const samples = await page.evaluate(async () => {
      const x = (id: string) =>
        new DOMMatrix(getComputedStyle(document.getElementById(id)!).transform).m41;
      const out: Record<string, [number, number]> = {};
      for (let frame = 0; frame <= 90; frame++) {
        await window.__svc!.seek(frame / 30);
        if (frame % 15 === 0) out[String(frame / 30)] = [x("fade"), x("chase")];
      }
      return out;
    });
    expect(samples["0.5"]![0]).toBe(0);
    expect(samples["1.5"]![0]).toBeGreaterThan(40);
    expect(samples["1.5"]![0]).toBeLessThan(60);
    expect(samples["2.5"]![0]).toBeCloseTo(100, 3);
    // A property GSAP moves every frame while it also has a transition follows close behind.
    expect(samples["1"]![1]).toBeGreaterThan(100);
    expect(samples["1"]![1]).toBeLessThan(150);
    expect(samples["3"]![1]).toBeCloseTo(300, 3);
  });

  it("waits for the page's own fetches and start-up frames before taking the duration", async () => {
    const page = await open({
      "/index.html": html(
        `<div data-composition-id="main" data-width="640" data-height="360">
           <div id="box" style="width:10px;height:10px"></div>
         </div>
         <script>
           fetch("/data.json")
             .then((response) => response.json())
             .then((data) => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(data)))))
             .then((data) => {
               const tl = gsap.timeline({ paused: true });
               tl.to("#box", { x: data.distance, duration: data.seconds, ease: "none" });
               window.__timelines = { main: tl };
             });
         </script>`,
        `<script src="/gsap.min.js"></script>`,
      ),
      "/data.json": JSON.stringify({ distance: 300, seconds: 3 }),
    });
    expect(await page.evaluate(() => window.__svc!.info().duration)).toBe(3);
    await seek(page, 1);
    expect((await translateX(page, "#box"))[0]).toBeCloseTo(100, 3);
  });
});
