// The composition preview: <svc-player> on the app's loopback preview server, with the form's
// values applied live (the player reloads its frame at the same time when they change). The player
// uses served frames: the preview server hands out the frame document (runtime injected, GSAP from
// its own copy), so the frame has its own origin and policy and this window's CSP stays strict.
import { useEffect, useLayoutEffect, useRef } from "react";
import "../../player/index";
import type { SvcPlayer } from "../../player/index";
import type { VariableValues } from "../../shared/variables";
import type { PageCaptions } from "../../shared/captions";

export function Preview({
  url,
  fps,
  values,
  captions,
  aspectRatio,
}: {
  url: string;
  fps: number;
  values: VariableValues;
  /** Drawn over the composition by the player's runtime, live (no reload). */
  captions?: PageCaptions | undefined;
  /** Lay the composition out at this size (one of the sizes ticked); undefined: its own. */
  aspectRatio?: string | undefined;
}) {
  const player = useRef<SvcPlayer>(null);
  const applied = useRef<string>("{}");
  // Attributes, not React props: React 19 assigns a custom element's props as properties when the
  // element has them, and `fps` is a read-only property of the player. `src` goes last (it loads).
  useLayoutEffect(() => {
    const element = player.current;
    if (!element) return;
    element.setAttribute("frame", "served");
    element.setAttribute("fps", String(fps));
    if (aspectRatio) element.setAttribute("aspect-ratio", aspectRatio);
    else element.removeAttribute("aspect-ratio");
    if (element.getAttribute("src") !== url) element.setAttribute("src", url);
  }, [url, fps, aspectRatio]);
  useEffect(() => {
    const element = player.current;
    const json = JSON.stringify(values);
    if (!element || json === applied.current) return;
    applied.current = json;
    element.variables = values;
  }, [values]);
  const shownCaptions = useRef<string>("null");
  useEffect(() => {
    const element = player.current;
    const json = JSON.stringify(captions ?? null);
    if (!element || json === shownCaptions.current) return;
    shownCaptions.current = json;
    element.captions = captions;
  }, [captions]);
  return (
    <svc-player ref={player} class="preview" controls="" loop="" aria-label="Composition preview" />
  );
}
