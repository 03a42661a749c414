// The shared layer's public entry point (`svc/shared` in package.json `exports`): the render
// settings' schema and rules, the variables schema and its validation, composition scanning and
// named limits — the one source of truth an app validates requests with. `z` is the zod instance
// these schemas are built with; extend them with it rather than with another copy of zod.
export { z } from "zod";
export * from "./render-options";
export * from "./variables";
export { scanCompositionHtml, detectAspectRatio, type CompositionScan } from "./composition-scan";
export { contentTypeFor } from "./content-types";
export * from "./findings";
export { FPS_MAX, FPS_MIN, DEFAULT_FPS } from "./limits";
export { parseByteRange, type ByteRange } from "./byte-range";
