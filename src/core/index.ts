// The client library's public entry point (`svc/core` in package.json `exports`): what an app
// needs to render on an svc render service the template way — publish a project once, then
// submit any number of renders of that asset, then wait for and download each.
export { ApiClient, type ApiClientOptions } from "./api-client";
export { ClientError } from "./errors";
export { publishProject, type PublishResult } from "./publish";
export { buildRenderRequest, newIdempotencyKey, type RenderSettings } from "./render-request";
export { finishRender } from "./pipeline";
export { isTransient } from "./api-client";
export { withApiKey, type ResolvedCredential, resolveCredential } from "./credentials";
export { registerSecret, hintKey, type ErrorParams, scrubSecrets } from "./errors";
export {
  LOGIN_TIMEOUT_MS,
  loginWithBrowser,
  loginWithDevice,
  openSystemBrowser,
  saveSignIn,
  revokeToken,
  signOut,
  type SignOutResult,
  OAuthSession,
  apiCredential,
  type CredentialBackend,
} from "./oauth";
export { loadClientConfig, type ClientConfig } from "./config";
export {
  batchRowKey,
  runBatch,
  type BatchRowResult,
  BatchRunner,
  type BatchUploadEvent,
} from "./batch";
export { planBatchRows, readBatchTable, type PlannedRow } from "./batch-plan";
export { dryRunProject, prepareProject } from "./publish";
export { checkIdempotencyKey, checkSettings, type ProjectSource } from "./render-request";
export { openCredentialBackend } from "./keychain";
export { isServiceAnswering } from "./local-service";
export { defaultOutputPath, recordOutput, downloadOutputs, otherOutputPaths } from "./download";
export { type RenderEvent, renderOnService, type ServiceRenderState } from "./pipeline";
export { valuesWithBrand } from "./brand-file";
export { createFromTemplate, listStarterTemplates } from "./gallery";
export { scanProject } from "./project-scan";
export { clientRetryDelay, sleep } from "./backoff";
