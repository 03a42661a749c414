// `svc/node`: the Node-tier pieces a server built on svc uses (the preview-render template's file
// routes): the root guard, the Range answer and the loopback Host check of svc's own file servers
// (static-files.ts), so every svc server answers a file request the same way.
export {
  isLoopbackHostHeader,
  keepInsideRoot,
  rangeAnswer,
  resolveInsideRoot,
  type RangeAnswer,
} from "./static-files";
export { createZip, FIXED_ZIP_DATE, zipBuffers } from "./zip";
export { abortableSleep, backoffDelay, type Sleep, withTimeout } from "./wait";
export { writeJsonFileAtomic, JsonFileWriter, readJsonFile } from "./atomic-file";
export { startDetached, systemOpenCommand } from "./open";
export { sameSecret } from "./secrets";
export { type ResolvedLibrary, configureLibraryCache } from "./library-cache";
export { cdnAnswer, libraryResponse } from "./cdn-files";
export { findFile, sendFile, startLoopbackServer, type LoopbackServer } from "./static-files";
