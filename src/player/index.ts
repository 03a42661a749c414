// The <svc-player> ES module: importing it defines the element.
import { defineSvcPlayer } from "./svc-player";

export { SvcPlayer, buildFrameDocument } from "./svc-player";
export type { FrameInfo } from "./protocol";

defineSvcPlayer();
