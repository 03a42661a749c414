// The client library's second door: what a command that renders on this computer needs from it
// (errors and their hints, brand files, starter templates), without the service client. Loading
// src/core/index.ts pulls in the HTTP client, sign-in and the keychain (got, undici, archiver:
// ~0.4 s of CPU at every start), which `svc render` paid before its first frame.
export { ClientError, hintKey, type ErrorParams } from "./errors";
export { valuesWithBrand } from "./brand-file";
export { createFromTemplate, listStarterTemplates } from "./gallery";
