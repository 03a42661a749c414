// The names the desktop IPC contract travels under, without its schemas: the sandboxed preload
// can load no modules besides Electron's own, so it needs these as plain constants (zod stays out
// of it). src/shared/ipc.ts checks at compile time that its schemas cover exactly these methods.

export const IPC_METHOD_NAMES = [
  "app.info",
  "project.scan",
  "project.dryRun",
  "project.previewUrl",
  "project.check",
  "project.quote",
  "variables.validate",
  "project.pickImage",
  "project.listImages",
  "queue.submit",
  "batches.submit",
  "batches.list",
  "batches.retryFailed",
  "batches.cancel",
  "batches.remove",
  "batches.openFolder",
  "media.url",
  "app.examples",
  "gallery.list",
  "gallery.poster",
  "gallery.create",
  "queue.cancel",
  "queue.retry",
  "queue.list",
  "queue.redownload",
  "queue.remove",
  "queue.openFile",
  "renders.list",
  "renders.get",
  "renders.quote",
  "renders.variables",
  "renders.delete",
  "renders.download",
  "auth.status",
  "auth.login",
  "auth.logout",
  "auth.cancel",
  "settings.get",
  "settings.set",
  "service.state",
  "host.pickFolder",
  "host.listFolders",
  "host.revealFile",
  "host.openExternal",
] as const;

export type IpcMethodName = (typeof IPC_METHOD_NAMES)[number];

export const IPC_EVENT_NAMES = [
  "queuedRender",
  "batch",
  "service",
  "notification",
  "auth",
] as const;
export type IpcEventName = (typeof IPC_EVENT_NAMES)[number];

/** Electron channel names (the web transport uses /api/ipc/<method> and /api/events). */
export const IPC_INVOKE_CHANNEL = "svc:invoke";
export const IPC_EVENT_CHANNEL = "svc:event";

/** Subprotocols of the web-mode event socket: the token travels as `svc.token.<token>`. */
export const EVENTS_PROTOCOL = "svc-events";
export const TOKEN_PROTOCOL_PREFIX = "svc.token.";
