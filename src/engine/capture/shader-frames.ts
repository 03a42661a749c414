// Frames inside a shader transition of `@hyperframes/shader-transitions`, drawn as the reference
// renderer draws them (bench/README.md "Shader transitions"): at each frame of a transition
// window the outgoing and the incoming scene are captured alone, at the frame's time, and their
// blend by the transition's shader is the frame. The page does the hiding and the blending
// (runtime/shader-transitions.ts); this module decides which frames, and moves the pictures.
// A page without transitions costs one evaluate per page (the first frame), nothing per frame.
import type { CapturePage, CapturedFrame } from "../browser/capture";
import type { ShaderTransition } from "../runtime/shader-transitions";

interface PageState {
  transitions: ShaderTransition[];
  /** A blended picture is over the page (removed before the next frame's capture). */
  overlay: boolean;
}

const pages = new WeakMap<CapturePage, PageState>();

/**
 * The transition a time is in, and its progress, as the library's page-side compositor decides:
 * from its start to its end, both included, progress linear in time (the transition's `ease` is
 * not applied there). A transition without a shader is a CSS crossfade the page draws itself.
 */
export function transitionAt(
  transitions: readonly ShaderTransition[],
  time: number,
): { transition: ShaderTransition & { shader: string }; progress: number } | undefined {
  for (const transition of transitions) {
    if (typeof transition.shader !== "string") continue;
    const { time: start, duration } = transition;
    if (time < start || time > start + duration) continue;
    const progress = duration === 0 ? 1 : Math.min(1, Math.max(0, (time - start) / duration));
    return { transition: { ...transition, shader: transition.shader }, progress };
  }
  return undefined;
}

/** Captures frame `frame` of a page already seeked to it: blended inside a transition window. */
export async function captureFrame(
  page: CapturePage,
  frame: number,
  fps: number,
  skipUnchanged: boolean,
): Promise<CapturedFrame> {
  let state = pages.get(page);
  if (!state) {
    const transitions = await page.evaluate<ShaderTransition[] | null>(
      "window.__svcShaderTransitions ? window.__svcShaderTransitions.list() : null",
    );
    state = { transitions: transitions ?? [], overlay: false };
    pages.set(page, state);
  }
  if (state.transitions.length === 0) return page.capture(skipUnchanged);
  const active = transitionAt(state.transitions, frame / fps);
  if (!active) {
    if (state.overlay) {
      await page.evaluate("window.__svcShaderTransitions.clear()");
      state.overlay = false;
    }
    return page.capture(skipUnchanged);
  }
  const { transition, progress } = active;
  const scene = async (id: string) => {
    await page.evaluate(`window.__svcShaderTransitions.isolate(${JSON.stringify(id)})`);
    return page.stillPng();
  };
  // The previous frame's blend must not be in the scenes' pictures.
  if (state.overlay) await page.evaluate("window.__svcShaderTransitions.clear()");
  const from = await scene(transition.fromScene);
  const to = await scene(transition.toScene);
  await page.evaluate("window.__svcShaderTransitions.isolate(null)");
  await page.evaluate(
    `window.__svcShaderTransitions.composite(${JSON.stringify(from)}, ${JSON.stringify(to)}, ${JSON.stringify(
      {
        frameTime: frame / fps,
        fromScene: transition.fromScene,
        toScene: transition.toScene,
        shader: transition.shader,
      },
    )}, ${progress})`,
  );
  state.overlay = true;
  return page.capture(skipUnchanged);
}
