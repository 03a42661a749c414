// Compositions written for the reference renderer's format (npm `hyperframes`), on small fixtures
// of ours: each test reproduces one way such a page came out different from what the reference
// draws, and reads what the page shows after `__svc.seek(t)`.
import { describe, expect, it } from "vitest";
import { html, open, seek, translateX, usePageBrowser, visibility } from "../testing/runtime-page";

usePageBrowser();

const GSAP_TAG = '<script src="/gsap.min.js"></script>';

function backgroundOf(page: Awaited<ReturnType<typeof open>>, selector: string): Promise<string> {
  return page.evaluate(
    (sel) => getComputedStyle(document.querySelector(sel)!).backgroundColor,
    selector,
  );
}

describe("reference-format compositions", () => {
  it("keeps the <head> styles and scripts of a sub-composition file that has no <template>", async () => {
    // A catalog block: a standalone page whose CSS and timeline code sit in its <head>; its
    // html/body rules mean the composition's own box.
    const block = `<!doctype html><html><head>${GSAP_TAG}
      <style>
        html, body { width: 640px; height: 360px; background: rgb(5, 7, 11); }
        .card { position: absolute; left: 0; top: 0; width: 100px; height: 50px; background: rgb(200, 30, 40); }
      </style>
      <script>window.headScriptRan = true;</script>
      </head><body>
      <div id="root" data-composition-id="block" data-width="640" data-height="360" data-duration="2">
        <div class="card"></div>
      </div>
      <script>
        const tl = gsap.timeline({ paused: true });
        tl.to(".card", { x: 200, duration: 2, ease: "none" });
        window.__timelines["block"] = tl;
      </script></body></html>`;
    const page = await open({
      "/index.html": html(
        `<div id="main" data-composition-id="main" data-width="640" data-height="360" data-duration="2">
           <div data-composition-id="block" data-composition-src="compositions/block.html"
                data-start="0" data-duration="2" data-track-index="1" data-width="640" data-height="360"></div>
         </div>`,
        GSAP_TAG,
      ),
      "/compositions/block.html": block,
    });
    expect(await backgroundOf(page, ".card")).toBe("rgb(200, 30, 40)");
    expect(await backgroundOf(page, "[data-composition-src], [data-svc-instance]")).toBe(
      "rgb(5, 7, 11)",
    );
    // The host page's own body keeps its style: the block's `body` rule is the block's box.
    expect(await backgroundOf(page, "body")).toBe("rgba(0, 0, 0, 0)");
    expect(
      await page.evaluate(() => (window as unknown as { headScriptRan?: boolean }).headScriptRan),
    ).toBe(true);
    await seek(page, 1);
    expect((await translateX(page, ".card"))[0]).toBeCloseTo(100, 0);
  });

  it("gives page scripts an empty window.__timelines before they run", async () => {
    // As the reference's `init` writes it: no `window.__timelines = window.__timelines || {}`.
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="3">
           <div class="box" style="width:10px;height:10px;background:red"></div>
         </div>
         <script>
           const tl = gsap.timeline({ paused: true });
           tl.to(".box", { x: 300, duration: 3, ease: "none" });
           window.__timelines["main"] = tl;
         </script>`,
        GSAP_TAG,
      ),
    });
    await seek(page, 1.5);
    expect((await translateX(page, ".box"))[0]).toBeCloseTo(150, 0);
  });

  it("plays an inline nested composition's timeline from its data-start", async () => {
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="6">
           <div id="intro" data-composition-id="intro" data-start="0" data-duration="2">
             <div class="a" style="width:10px;height:10px;background:red"></div>
           </div>
           <div id="outro" data-composition-id="outro" data-start="2" data-duration="4">
             <div class="b" style="width:10px;height:10px;background:blue"></div>
             <div class="clip late" data-start="1" data-duration="1" style="width:5px;height:5px"></div>
           </div>
         </div>
         <script>
           const intro = gsap.timeline({ paused: true });
           intro.to(".a", { x: 100, duration: 2, ease: "none" });
           const outro = gsap.timeline({ paused: true });
           outro.to(".b", { x: 400, duration: 4, ease: "none" });
           window.__timelines["intro"] = intro;
           window.__timelines["outro"] = outro;
         </script>`,
        GSAP_TAG,
      ),
    });
    await seek(page, 3);
    // 1 s into the outro, not 3 s.
    expect((await translateX(page, ".b"))[0]).toBeCloseTo(100, 0);
    // A clip inside it starts 1 s after the outro does.
    expect(await visibility(page, ".late")).toEqual(["visible"]);
    await seek(page, 2.5);
    expect(await visibility(page, ".late")).toEqual(["hidden"]);
    expect(await visibility(page, "#intro")).toEqual(["hidden"]);
  });

  it("takes the length of a root without data-duration from where its clips end", async () => {
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360">
           <div class="clip" data-start="0" data-duration="2">one</div>
           <div class="clip" data-start="2" data-duration="3.5">two</div>
         </div>`,
      ),
    });
    expect(await page.evaluate(() => window.__svc!.duration)).toBe(5.5);
  });
  it("draws fonts the page names but never loads with the reference's bundled faces", async () => {
    const text = "Sphinx of black quartz, judge my vow";
    const span = (family: string, id: string) =>
      `<div><span id="${id}" style="font-family:${family};font-size:40px">${text}</span></div>`;
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="1">
           ${span("Inter", "inter")}
           ${span("'Helvetica Neue', Helvetica, Arial, sans-serif", "helvetica")}
           ${span("-apple-system, BlinkMacSystemFont, sans-serif", "system")}
           ${span("var(--ui-font)", "variable")}
           ${span("'No Such Font', serif", "serif")}
           ${span("Menlo, monospace", "menlo")}
           ${span("'JetBrains Mono'", "jetbrains")}
         </div>`,
        "<style>:root { --ui-font: system-ui, sans-serif; }</style>",
      ),
    });
    const widths = await page.evaluate(() =>
      Object.fromEntries(
        Array.from(document.querySelectorAll("span")).map((span) => [
          span.id,
          Math.round(span.getBoundingClientRect().width * 10) / 10,
        ]),
      ),
    );
    expect(widths.helvetica).toBe(widths.inter);
    expect(widths.system).toBe(widths.inter);
    expect(widths.variable).toBe(widths.inter);
    expect(widths.menlo).toBe(widths.jetbrains);
    expect(widths.serif).not.toBe(widths.inter);
    expect(widths.menlo).not.toBe(widths.inter);
    const loaded = await page.evaluate(() =>
      Array.from(document.fonts)
        .filter((face) => face.status === "loaded")
        .map((face) => `${face.family.replace(/"/g, "")} ${face.weight}`),
    );
    expect(loaded).toContain("Helvetica 400");
    expect(loaded).toContain("Inter 400");
  });
  it("leaves a family given by the font shorthand as written, as the reference does", async () => {
    const text = "hyperframes add typewriter";
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="1">
           <div><span id="shorthand" class="shorthand">${text}</span></div>
           <div><span id="longhand" class="longhand">${text}</span></div>
           <div><span id="sized" class="sized">${text}</span></div>
           <div><span id="inter" style="font-family: Inter; font-weight: 800; font-size: 30px">${text}</span></div>
         </div>`,
        `<style>
           .shorthand { font: 800 30px/1 ui-monospace, SFMono-Regular, Menlo, monospace; }
           .longhand { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-weight: 800; font-size: 30px; }
           .sized { --size: 30px; font: 800 12px/1 ui-monospace, SFMono-Regular, Menlo, monospace; font-size: var(--size); }
         </style>`,
      ),
    });
    const widths = await page.evaluate(() =>
      Object.fromEntries(
        Array.from(document.querySelectorAll("span")).map((span) => [
          span.id,
          Math.round(span.getBoundingClientRect().width * 10) / 10,
        ]),
      ),
    );
    // font-family: Inter is put in front; font: drawn in the system's monospace.
    expect(widths.longhand).toBe(widths.inter);
    expect(widths.shorthand).not.toBe(widths.inter);
    // A longhand after the shorthand (a var() size, as matrix-decode has) leaves it a shorthand.
    expect(widths.sized).toBe(widths.shorthand);
  });

  it("lets a sub-composition's scripts measure text in the font it will be drawn with", async () => {
    // GSAP reads sizes when a tween starts (a centred card's -50% becomes pixels); the reference's
    // bundled faces are there before scripts run, so ours must be too.
    const block = `<!doctype html><html><head>
      <style>.label { font-family: Helvetica, sans-serif; font-size: 40px; }</style></head><body>
      <div data-composition-id="block" data-width="640" data-height="360" data-duration="1">
        <span class="label">Sphinx of black quartz</span>
      </div>
      <script>window.widthAtScript = document.querySelector(".label").getBoundingClientRect().width;</script>
      </body></html>`;
    const page = await open({
      "/index.html": html(
        `<div id="main" data-composition-id="main" data-width="640" data-height="360" data-duration="1">
           <div data-composition-id="block" data-composition-src="compositions/block.html"></div>
         </div>`,
      ),
      "/compositions/block.html": block,
    });
    const { atScript, atReady } = await page.evaluate(() => ({
      atScript: (window as unknown as { widthAtScript: number }).widthAtScript,
      atReady: document.querySelector(".label")!.getBoundingClientRect().width,
    }));
    expect(atScript).toBe(atReady);
  });
  it("draws a timeline's zero-duration sets at time 0 on the first frame", async () => {
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="2">
           <div id="title" style="opacity:0">Title</div>
         </div>
         <script>
           const tl = gsap.timeline({ paused: true });
           tl.set("#title", { opacity: 1 }, 0);
           tl.to("#title", { opacity: 0, duration: 0.5 }, 1);
           window.__timelines["main"] = tl;
         </script>`,
        GSAP_TAG,
      ),
    });
    await seek(page, 0);
    expect(
      await page.evaluate(() => getComputedStyle(document.querySelector("#title")!).opacity),
    ).toBe("1");
  });
  it("runs a tween's callbacks when a frame passes its end", async () => {
    // A counter written by onUpdate/onComplete: the frame after the count ends shows the total.
    const page = await open({
      "/index.html": html(
        `<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="4">
           <div id="amount">0</div>
         </div>
         <script>
           const state = { value: 0 };
           const show = (v) => { document.getElementById("amount").textContent = String(Math.round(v)); };
           const tl = gsap.timeline({ paused: true });
           tl.to(state, { value: 10000, duration: 3.16, ease: "none",
             onUpdate: () => show(state.value), onComplete: () => show(10000) }, 0);
           window.__timelines["main"] = tl;
         </script>`,
        GSAP_TAG,
      ),
    });
    await seek(page, 3.1);
    await seek(page, 3.2);
    expect(await page.evaluate(() => document.getElementById("amount")!.textContent)).toBe("10000");
  });
  it("resolves a sub-composition's paths next to its file when the file is there, else from the root", async () => {
    // 1x1 PNGs of two sizes tell which file was loaded.
    const png = (size: number) =>
      Buffer.from(
        size === 1
          ? "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
          : "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAQAAADYv8WvAAAADklEQVR42mNkYGBgBGIAAA0AA2dF3GMAAAAASUVORK5CYII=",
        "base64",
      );
    const block = `<!doctype html><html><head>
      <style>.bg { width: 10px; height: 10px; background-image: url("assets/dot.png"); }</style>
      </head><body>
      <div data-composition-id="block" data-width="640" data-height="360" data-duration="1">
        <img id="sibling" src="assets/dot.png"><img id="rooted" src="media/logo.png"><div class="bg"></div>
      </div></body></html>`;
    const page = await open({
      "/index.html": html(
        `<div id="main" data-composition-id="main" data-width="640" data-height="360" data-duration="1">
           <div data-composition-id="block" data-composition-src="compositions/block.html"></div>
         </div>`,
      ),
      "/compositions/block.html": block,
      "/compositions/assets/dot.png": png(2),
      "/media/logo.png": png(1),
    });
    const found = await page.evaluate(() => ({
      sibling: (document.getElementById("sibling") as HTMLImageElement).naturalWidth,
      rooted: (document.getElementById("rooted") as HTMLImageElement).naturalWidth,
      background: getComputedStyle(document.querySelector(".bg")!).backgroundImage,
    }));
    expect(found).toEqual({
      sibling: 2,
      rooted: 1,
      background: expect.stringContaining("/compositions/assets/dot.png"),
    });
  });
  it("keeps a sub-composition's style sheet whose @import URL holds semicolons", async () => {
    const block = `<!doctype html><html><body>
      <div data-composition-id="block" data-width="640" data-height="360" data-duration="1">
        <style>
          @import url("/fonts.css?family=Inter:wght@300;400;500&display=swap");
          .card { position: absolute; left: 20px; width: 50px; height: 50px; background: rgb(0, 128, 0); }
        </style>
        <div class="card"></div>
      </div></body></html>`;
    const page = await open({
      "/index.html": html(
        `<div id="main" data-composition-id="main" data-width="640" data-height="360" data-duration="1">
           <div data-composition-id="block" data-composition-src="compositions/block.html"></div>
         </div>`,
      ),
      "/compositions/block.html": block,
      "/fonts.css": ".imported { color: red; }",
    });
    expect(await backgroundOf(page, ".card")).toBe("rgb(0, 128, 0)");
  });
  it("lays a host out where its CSS puts it, and a file's #root is not the page's #root", async () => {
    // The catalog's component demos: a card-sized host (no position of its own) whose file fills
    // it with `#root { position: absolute; inset: 0 }`, on a page that styles its own #root.
    const file = `<!doctype html><html><body><template>
      <div id="root" data-composition-id="card" data-duration="1">
        <style>#root { position: absolute; inset: 0; container-type: size; } .fill { width: 100cqw; height: 10px; }</style>
        <div class="fill"></div>
        <script>
          window.rootSeen = document.getElementById("root").getAttribute("data-composition-id");
          window.widthAtMount = document.getElementById("root").getBoundingClientRect().width;
        </script>
      </div></template></body></html>`;
    const page = await open({
      "/index.html": html(
        `<style>#root { width: 640px; height: 360px; --tone: grey; } .mount { width: 50%; height: 50%; left: 25%; top: 20%; }</style>
         <div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="1">
           <div class="mount" data-composition-id="card" data-composition-src="card.html"
                data-start="0" data-duration="1" data-width="320" data-height="180"></div>
         </div>`,
      ),
      "/card.html": file,
    });
    const layout = await page.evaluate(() => {
      const box = (element: Element) => {
        const rect = element.getBoundingClientRect();
        return [rect.x, rect.y, rect.width, rect.height].map(Math.round);
      };
      return {
        host: box(document.querySelector(".mount")!),
        fill: box(document.querySelector(".fill")!),
        rootSeen: (window as unknown as { rootSeen: string }).rootSeen,
        // The reference lays the root out after the nested scripts ran: a canvas sized at mount
        // (catalog particle-image-reveal) is sized from the box before that.
        widthAtMount: (window as unknown as { widthAtMount: number }).widthAtMount,
      };
    });
    expect(layout).toEqual({
      host: [160, 72, 320, 180],
      fill: [160, 72, 320, 10],
      rootSeen: "card",
      widthAtMount: 640,
    });
  });
  it("gives a nested instance its variables as custom properties after its scripts ran", async () => {
    const file = `<!doctype html><html data-composition-variables='[{"id":"accent","type":"string","label":"Accent","default":"green"}]'>
      <body><div data-composition-id="card" data-duration="1">
        <span class="live" style="color: var(--accent)">live</span>
        <script>
          const probe = document.createElement("span");
          probe.style.color = "var(--accent)";
          document.querySelector(".live").after(probe);
          window.atMount = getComputedStyle(probe).color;
        </script>
      </div></body></html>`;
    const page = await open({
      "/index.html": html(
        `<div id="main" data-composition-id="main" data-width="640" data-height="360" data-duration="1" style="--accent: rgb(1, 2, 3)">
           <div data-composition-id="card" data-composition-src="card.html" data-variable-values='{"accent":"blue"}'></div>
         </div>`,
      ),
      "/card.html": file,
    });
    expect(
      await page.evaluate(() => ({
        atMount: (window as unknown as { atMount: string }).atMount,
        live: getComputedStyle(document.querySelector(".live")!).color,
      })),
    ).toEqual({ atMount: "rgb(1, 2, 3)", live: "rgb(0, 0, 255)" });
  });
  it("hides a nested composition while its scripts run, and shows it once it plays", async () => {
    // A block that paints its own elements into a canvas skips hidden ones, as the reference does.
    const file = `<!doctype html><html><body>
      <div data-composition-id="card" data-duration="1">
        <div class="label">SCENE A</div>
        <script>window.seenAtMount = getComputedStyle(document.querySelector(".label")).visibility;</script>
      </div></body></html>`;
    const page = await open({
      "/index.html": html(
        `<div id="main" data-composition-id="main" data-width="640" data-height="360" data-duration="1">
           <div data-composition-id="card" data-composition-src="card.html" data-start="0" data-duration="1"></div>
         </div>`,
      ),
      "/card.html": file,
    });
    await seek(page, 0.5);
    expect(
      await page.evaluate(() => ({
        atMount: (window as unknown as { seenAtMount: string }).seenAtMount,
        playing: getComputedStyle(document.querySelector(".label")!).visibility,
      })),
    ).toEqual({ atMount: "hidden", playing: "visible" });
  });
});
