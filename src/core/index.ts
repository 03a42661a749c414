// The client library's public entry point (`svc/core` in package.json `exports`): what an app
// needs to render on an svc render service the template way — publish a project once, then
// submit any number of renders of that asset, then wait for and download each.
export { ApiClient, type ApiClientOptions } from "./api-client";
export { ClientError } from "./errors";
export { publishProject, type PublishResult } from "./publish";
export { buildRenderRequest, newIdempotencyKey, type RenderSettings } from "./render-job";
export { finishRender } from "./pipeline";
