// Runs inside the composition frame, after the page runtime: reports readiness to the player and
// performs the seeks it asks for. Bundled into the frame script by src/engine/bundles/player-bundle.ts
// (and src/main/frame-script.ts for the desktop preview server's served frames).
import type { SvcPage } from "../engine/runtime/types";
import { FRAME_TAG, isPlayerMessage, type FrameMessage } from "./protocol";

const runtime = (window as unknown as { __svc?: SvcPage }).__svc;

function post(message: FrameMessage): void {
  window.parent.postMessage(message, "*");
}

function announce(): void {
  if (!runtime) return;
  if (runtime.error) post({ tag: FRAME_TAG, type: "error", message: runtime.error });
  else if (runtime.ready) post({ tag: FRAME_TAG, type: "ready", info: runtime.info() });
}

post({ tag: FRAME_TAG, type: "started" });
window.addEventListener("svc:ready", announce);
window.addEventListener("svc:error", announce);
window.addEventListener("error", (event) =>
  post({ tag: FRAME_TAG, type: "error", message: event.message }),
);

window.addEventListener("message", (event) => {
  if (event.source !== window.parent || !isPlayerMessage(event.data)) return;
  if (event.data.type === "captions") {
    window.__svcCaptions?.set(event.data.captions ?? undefined);
    return;
  }
  if (!runtime?.ready) return;
  const { id, time } = event.data;
  runtime.seek(time).then(
    () => post({ tag: FRAME_TAG, type: "seeked", id, time }),
    (error: unknown) => post({ tag: FRAME_TAG, type: "error", message: String(error) }),
  );
});

if (!runtime)
  post({ tag: FRAME_TAG, type: "error", message: "The svc page runtime did not start." });
