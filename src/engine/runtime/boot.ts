// Start-up of the page runtime. Runs before any page script (installed with addInitScript):
// virtual time and the variables API go in immediately; bindings are applied while the document
// parses (so page scripts already see bound text); after DOMContentLoaded we mount nested
// compositions, wait for assets, seek to 0 and raise `ready`. Failures of the runtime itself land
// in `__svc.error` so the engine can report them instead of timing out.
import { resolveVariables } from "../../shared/variables";
import { installVirtualClock, type VirtualClock } from "./clock";
import { applyReferenceFonts } from "./fonts";
import {
  CompositionError,
  mountChildren,
  registerInlineCompositions,
  type MountContext,
} from "./compositions";
import { layOutRootChildren, numberAttr } from "./layout";
import {
  trackPageFetches,
  trackResourceLoads,
  useRealTimers,
  waitForAssets,
  waitForPageFetches,
} from "./readiness";
import { Scene } from "./scene";
import { countHfSeekListeners } from "./adapters";
import type {
  CompositionInfo,
  CompositionInstance,
  JumpResult,
  SvcPage,
  TimelineRegistry,
} from "./types";
import {
  applyCssVariables,
  bindElement,
  BOUND_SELECTOR,
  combinedSchemaJson,
  parseSchemaCached,
} from "./variables";

export const DEFAULT_EPOCH_MS = 1704067200000;

export interface RuntimeOptions {
  variables?: Record<string, unknown>;
  epochMs?: number;
  /**
   * Previews only: where the page serving the preview answers CDN URLs; sub-composition files
   * get their CDN URLs pointed there, as the frame document did (renders answer them by network
   * interception instead).
   */
  libraryBase?: string;
  /** Renders: the output frame rate (videos show the picture the reference draws per frame). */
  fps?: number;
}

/**
 * `window.__timelines` as an accessor: assigning a new object merges it into the registry, so a
 * sub-composition that writes `window.__timelines = {}` cannot wipe what the page registered.
 */
function installTimelineRegistry(): void {
  // Present before any page script, as the reference runtime provides it: pages write
  // `window.__timelines["main"] = tl` without creating the registry.
  let registry: TimelineRegistry | undefined = {};
  Object.defineProperty(window, "__timelines", {
    configurable: true,
    enumerable: true,
    get: () => registry,
    set: (value: TimelineRegistry | undefined) => {
      if (registry && value && typeof value === "object" && value !== registry) {
        Object.assign(registry, value);
      } else {
        registry = value;
      }
    },
  });
}

interface GsapLike {
  config?(settings: { force3D?: boolean | "auto" }): unknown;
}

/**
 * GSAP's default force3D "auto" writes translate3d() while a tween is in progress, and a
 * seek-per-frame render is always in progress, so every tweened element becomes its own
 * compositor layer. On a CPU-only machine drawing dozens of transformed layers is the costliest
 * part of a frame; 2D transforms paint into fewer layers and measured about 15-20% faster per
 * frame on examples/gsap-heavy (PSNR 43 dB against the 3D result: the same picture). 3D
 * rotations still use 3D matrices. The setting is applied the moment GSAP installs itself, before
 * any tween is created.
 */
function preferFlatGsapTransforms(): void {
  const configure = (gsap: GsapLike | undefined) => {
    try {
      gsap?.config?.({ force3D: false });
    } catch {
      // an unexpected GSAP build: keep its defaults
    }
  };
  let installed: GsapLike | undefined;
  Object.defineProperty(window, "gsap", {
    configurable: true,
    enumerable: true,
    get: () => installed,
    set: (value: GsapLike | undefined) => {
      installed = value;
      configure(value);
    },
  });
}

/**
 * `window.__HF_VIRTUAL_TIME__`, the name under which the reference's renderer tells libraries
 * that the page runs on a renderer's virtual time. @hyperframes/shader-transitions reads it to
 * take its render path (scenes switched by its timeline, the engine compositing the shader)
 * instead of its preview path, which samples scene frames on requestAnimationFrame before it
 * draws anything and so never leaves its "Preparing scene transitions" screen under a render.
 * The reference's engine composites the shader itself; svc does not yet (docs/composition-format.md,
 * "The runtime contract"), so inside a transition window the incoming scene is drawn as it is.
 */
function announceVirtualTime(clock: VirtualClock): void {
  const virtualTime = {
    originalSetTimeout: clock.realSetTimeout,
    originalClearTimeout: clock.realClearTimeout,
    getTime: () => clock.nowMs(),
  };
  Object.defineProperty(window, "__HF_VIRTUAL_TIME__", {
    configurable: true,
    value: virtualTime,
  });
}

export function bootRuntime(options: RuntimeOptions): SvcPage {
  const givenValues = { ...(options.variables ?? {}) };
  const clock = installVirtualClock(options.epochMs ?? DEFAULT_EPOCH_MS);
  const warnings: string[] = [];
  const waiting = new Set<string>(["document"]);
  let scene: Scene | undefined;
  let rootInstance: CompositionInstance | undefined;
  let current: CompositionInstance | undefined;
  let duration = 0;

  // The first element with data-composition-id that gives a size, as the engine's scan takes it
  // (src/shared/composition-scan.ts): a page may mark <html> too, without one.
  const findRoot = () =>
    document.querySelector<HTMLElement>("[data-composition-id][data-width][data-height]") ??
    document.querySelector<HTMLElement>("[data-composition-id]");
  const rootSchemaJson = () => combinedSchemaJson(document.documentElement, findRoot());
  const rootValues = () =>
    resolveVariables(parseSchemaCached(rootSchemaJson()).variables, givenValues);

  installTimelineRegistry();
  preferFlatGsapTransforms();
  trackResourceLoads();
  trackPageFetches();
  countHfSeekListeners();
  useRealTimers(clock.realSetTimeout);
  window.__svcVariables = givenValues;
  (window as unknown as Record<string, unknown>).__hfVariables = givenValues;
  announceVirtualTime(clock);
  const variablesApi = {
    getVariables(): Record<string, unknown> {
      if (current) return { ...current.values };
      return rootInstance ? { ...rootInstance.values } : rootValues();
    },
  };
  window.svc = variablesApi;
  // Compositions written for HyperFrames read their variables through this name.
  (window as unknown as Record<string, unknown>).__hyperframes ??= variablesApi;

  let chain = Promise.resolve();
  const page: SvcPage = {
    ready: false,
    duration: 0,
    waitingFor: [],
    info(): CompositionInfo {
      const root = findRoot();
      const fps = root ? numberAttr(root, "data-fps") : undefined;
      return {
        compositionId: root?.getAttribute("data-composition-id") ?? "",
        width: (root && numberAttr(root, "data-width")) ?? 0,
        height: (root && numberAttr(root, "data-height")) ?? 0,
        duration: scene ? duration : ((root && numberAttr(root, "data-duration")) ?? 0),
        ...(fps !== undefined ? { fpsHint: fps } : {}),
        variablesJson: rootSchemaJson(),
        warnings: [...warnings],
      };
    },
    seek(t: number): Promise<boolean> {
      const time = Number.isFinite(t) ? Math.max(0, t) : 0;
      const run = () => (scene ? scene.seek(time) : Promise.resolve(false));
      const next = chain.then(run, run);
      chain = next.then(
        () => undefined,
        () => undefined,
      );
      return next;
    },
    jump(fromFrame: number, toFrame: number, fps: number): Promise<JumpResult> {
      const run = () =>
        scene
          ? scene.jump(fromFrame, toFrame, fps)
          : Promise.resolve({ jumped: false, reasons: ["the page is not ready"] });
      const next = chain.then(run, run);
      chain = next.then(
        () => undefined,
        () => undefined,
      );
      return next;
    },
    jumpProblems() {
      return scene ? scene.takeJumpProblems() : [];
    },
    presentVideos() {
      scene?.presentMovedVideos();
    },
    media() {
      return scene ? scene.mediaSources() : [];
    },
  };
  // Read by the engine at any moment: live views, not copies taken at start-up.
  Object.defineProperties(page, {
    waitingFor: { get: () => [...waiting], enumerable: true },
    duration: { get: () => duration, enumerable: true },
  });
  window.__svc = page;

  // Bind variables as the parser creates elements, so page scripts see the final text and src.
  const bindPending = () => {
    const values = rootValues();
    for (const element of Array.from(document.querySelectorAll(BOUND_SELECTOR))) {
      if (!element.closest("[data-composition-src]")) bindElement(element, values);
    }
    const root = findRoot();
    if (root) applyCssVariables(root, values);
  };
  const observer = new MutationObserver((records) => {
    for (const record of records) {
      for (const node of Array.from(record.addedNodes)) {
        if (!(node instanceof Element)) continue;
        if (node.matches(BOUND_SELECTOR) || node.hasAttribute("data-composition-id")) {
          bindPending();
          return;
        }
      }
    }
  });
  observer.observe(document, { childList: true, subtree: true });

  // Pages that build their timeline in a load handler need it before we ask for the duration.
  const loaded =
    document.readyState === "complete"
      ? Promise.resolve()
      : new Promise<void>((resolve) =>
          window.addEventListener("load", () => resolve(), { once: true }),
        );

  // Embedders (the <svc-player> bridge) listen for these instead of polling `ready`/`error`.
  const fail = (message: string) => {
    page.error = message;
    console.error(`[svc] ${message}`);
    window.dispatchEvent(new CustomEvent("svc:error", { detail: message }));
  };

  const start = async () => {
    observer.disconnect();
    bindPending();
    waiting.delete("document");
    const root = findRoot();
    if (!root) {
      fail(
        "No composition root: add data-composition-id (with data-width and data-height) to the element that holds the video.",
      );
      return;
    }
    // The root's schema errors and variable issues are the engine's to report (it validates
    // before the page opens, strict or not); nested instances are only visible from here.
    const schema = parseSchemaCached(rootSchemaJson());
    rootInstance = {
      id: root.getAttribute("data-composition-id") ?? "",
      element: root,
      parent: undefined,
      depth: 0,
      offset: 0,
      declaredDuration: numberAttr(root, "data-duration"),
      schema: schema.variables,
      values: resolveVariables(schema.variables, givenValues),
      givenValues,
      timelines: [],
      src: undefined,
    };
    const context: MountContext = {
      warnings,
      waiting,
      ...(options.libraryBase ? { libraryBase: options.libraryBase } : {}),
      instances: [rootInstance],
      setCurrent: (instance) => {
        current = instance;
      },
    };
    applyReferenceFonts();
    try {
      await mountChildren(rootInstance, context);
    } catch (error) {
      fail(error instanceof CompositionError ? error.message : `Runtime failed: ${String(error)}`);
      return;
    }
    applyReferenceFonts();
    await waitForAssets({ waiting, warnings });
    if (document.readyState !== "complete") {
      waiting.add("page load");
      await loaded;
      waiting.delete("page load");
    }
    await waitForPageFetches({ waiting, warnings });
    // Let deferred start-up work settle before the first frame: zero-delay timers, and rAF
    // callbacks a few rounds deep (the "wait two frames for layout" idiom), each round followed by
    // a real task so promise callbacks run.
    for (let round = 0; round < 4; round++) {
      clock.advanceTo(0);
      await new Promise((resolve) => clock.realSetTimeout(resolve, 0));
      if (clock.pendingFrames() === 0) break;
    }
    // After the nested compositions' scripts ran, as in the reference: a script that sizes a
    // canvas from its composition's box at mount sees the box before the root's layout.
    layOutRootChildren(root);
    registerInlineCompositions(context);
    scene = new Scene(rootInstance, context.instances, clock, warnings, options.fps);
    await scene.seek(0);
    const found = scene.duration();
    if (found === undefined) {
      fail(
        "The composition has no duration: set data-duration on the root element, or register a GSAP timeline in window.__timelines under its composition id.",
      );
      return;
    }
    duration = found;
    page.ready = true;
    window.dispatchEvent(new CustomEvent("svc:ready"));
  };

  const run = () => {
    start().catch((error: unknown) => fail(`Runtime failed: ${String(error)}`));
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", run, { once: true });
  } else {
    run();
  }
  return page;
}
