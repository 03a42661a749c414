// The desktop app's one seam between the React renderer and the main process (SPEC.md section 7).
// Every request/response method is listed in `IpcMethods` with a zod schema for its input (the
// main process validates everything it receives: the renderer is not trusted) and a TypeScript
// type for its output; push events are listed in `IpcEvents`. Both transports — Electron IPC
// through the preload bridge, and web mode's HTTP + WebSocket — carry exactly these, and both wrap
// every answer in `IpcResult`, so an error keeps its `{code, message, hint}` on either path.
import { captionCueSchema, captionsRequestSchema, CAPTIONS_MAX_CUES } from "./captions";
import { z } from "zod";
import type { RenderList, RenderRecord } from "./api";
import type { RenderQuote } from "./quote";

import type { Finding } from "./findings";
import type { LocalRenderQuote } from "./quote";

export type { LocalRenderQuote };
import { BATCH_MAX_ROWS } from "./batch";
import { brandKitSchema } from "./brand";
import { TEMPLATE_NAME } from "./gallery";
import { renderSettingsRule, renderSettingsShape } from "./render-options";
import { MAX_OUTPUTS, outputsRule, outputsShape } from "./outputs";
import type { OutputFormat, Quality, Resolution } from "./render-options";
import type { VariableDefinition, VariableIssue, VariableValues } from "./variables";
import type { IpcEventName, IpcMethodName } from "./ipc-channels";

export {
  EVENTS_PROTOCOL,
  IPC_EVENT_CHANNEL,
  IPC_EVENT_NAMES,
  IPC_INVOKE_CHANNEL,
  IPC_METHOD_NAMES,
  TOKEN_PROTOCOL_PREFIX,
} from "./ipc-channels";
export type { IpcEventName, IpcMethodName };

// ---------------------------------------------------------------- errors and envelope

export interface IpcError {
  /** Stable code: the service's (`authentication_failed`), the core's, or `invalid_input`. */
  code: string;
  message: string;
  hint?: string;
}

/** A cancelled queued render's error when the service could not be told to stop its render (Cancel again). */
export const CANCEL_NOT_SENT = "cancel_not_sent";

export type IpcResult<T> = { ok: true; data: T } | { ok: false; error: IpcError };

// ---------------------------------------------------------------- shared pieces

const projectDir = z.string().min(1, { error: "dir must be a project folder" });
const composition = z.string().min(1).max(1024).optional();
const variables = z.record(z.string(), z.unknown());
const queuedRenderId = z.string().min(1);
const batchId = z.string().min(1);
const renderId = z.string().min(1).max(255);
/** Which file of a render with several outputs (default 0: the main video). */
const output = z
  .number()
  .int()
  .min(0)
  .max(MAX_OUTPUTS - 1)
  .optional();
const empty = z.object({}).strict().optional();
const templateName = z.string().regex(TEMPLATE_NAME, { error: "name must be a template's name" });
/** A new folder's name: no separators, not hidden, not "." or "..". */
const folderName = z
  .string()
  .trim()
  .min(1, { error: "Give the new video a name." })
  .max(80, { error: "A name may be at most 80 characters." })
  .refine(
    (name) =>
      !/[\\/:*?"<>|]/.test(name) &&
      ![...name].some((char) => char.charCodeAt(0) < 32) &&
      !name.startsWith("."),
    { error: 'A name cannot contain / \\ : * ? " < > | or start with a dot.' },
  );

export const queuedRenderSettingsSchema = z
  .object({
    ...renderSettingsShape,
    variables: variables.optional(),
    strictVariables: z.boolean().optional(),
    title: z.string().max(500).optional(),
    /** Several files from one render (sizes, a GIF, a poster), as the API's `outputs`. */
    ...outputsShape,
    /** Captions, as the API's `captions` (the app sends the creator's edited cues). */
    captions: captionsRequestSchema.optional(),
  })
  .superRefine(renderSettingsRule)
  .superRefine(outputsRule);
export type QueuedRenderSettings = z.output<typeof queuedRenderSettingsSchema>;

/** "local": the embedded service this app supervises; otherwise the base URL of a service. */
export const serviceSettingSchema = z.union([
  z.literal("local"),
  z.url({ protocol: /^https?$/, error: 'service must be "local" or an http(s) URL' }),
]);

export const settingsSchema = z.object({
  service: serviceSettingSchema,
  downloadsDir: z.string().min(1),
  concurrency: z.number().int().min(1).max(8),
  credentialStore: z.enum(["file", "keychain"]),
  /**
   * Web mode's folder browser shows only folders under this one; unset: the home folder and the
   * drives the user owns. A limit (a browser tab should not see other users' files), not a start.
   */
  folderBrowserRoot: z.string().min(1).optional(),
  /** The brand kit (Settings -> Brand) that fills compositions' brand variables. */
  brand: brandKitSchema.optional(),
});
export type DesktopSettings = z.output<typeof settingsSchema>;

// ---------------------------------------------------------------- outputs (ipc-views.ts)

export * from "./ipc-views";
import type {
  AppInfo,
  AuthStatus,
  BatchView,
  DryRunReport,
  ExampleProject,
  ImageListing,
  QueuedRenderView,
  MediaSource,
  PickFolderResult,
  PickImageResult,
  ProjectFolderListing,
  ProjectScanView,
  ServiceState,
  StarterTemplate,
} from "./ipc-views";

// ---------------------------------------------------------------- methods

export const ipcInputSchemas = {
  "app.info": empty,
  "project.scan": z.object({ dir: projectDir, composition }),
  "project.dryRun": z.object({ dir: projectDir, composition, variables: variables.optional() }),
  "project.previewUrl": z.object({ dir: projectDir, composition }),
  /**
   * What svc may not render faithfully in the composition with these values (`svc check`, with
   * network access off as the render service renders by default). A newer check of the same
   * project stops an older one, which then fails with `check_superseded`.
   */
  "project.check": z.object({ dir: projectDir, composition, variables: variables.optional() }),
  "variables.validate": z.object({ dir: projectDir, composition, values: variables }),
  "project.pickImage": z.object({ dir: projectDir }),
  /** `path`: a folder inside the project (default: its root); never lists anything outside it. */
  "project.listImages": z.object({ dir: projectDir, path: z.string().min(1).optional() }),
  /** From a project folder (zipped and uploaded), or again from an uploaded project (asset id). */
  "queue.submit": z.union([
    z
      .object({
        dir: projectDir,
        composition,
        settings: queuedRenderSettingsSchema,
        /** Default: the downloads folder of the settings. */
        outputDir: z.string().min(1).optional(),
      })
      .strict(),
    z
      .object({
        assetId: z.string().regex(/^asst_[\w-]{1,200}$/, { error: "assetId must be an asst_ id" }),
        composition: z.string().min(1).max(1024).default("index.html"),
        settings: queuedRenderSettingsSchema,
        outputDir: z.string().min(1).optional(),
      })
      .strict(),
  ]),
  /** Many videos from one template: every row checked against the schema again here. */
  "batches.submit": z
    .object({
      dir: projectDir,
      composition,
      settings: queuedRenderSettingsSchema,
      columns: z.array(z.string().min(1).max(200)).min(1).max(200),
      rows: z
        .array(
          z.object({
            row: z.number().int().min(1),
            cells: z.record(z.string(), z.unknown()),
            /** The caption file the creator chose for this row in the grid, read: its cues. */
            captionCues: z.array(captionCueSchema).min(1).max(CAPTIONS_MAX_CUES).optional(),
          }),
        )
        .min(1, { error: "a batch needs at least one row" })
        .max(BATCH_MAX_ROWS),
      outputPattern: z.string().min(1).max(300),
    })
    .strict(),
  "batches.list": empty,
  "batches.retryFailed": z.object({ batchId }),
  /** Cancels the rows that have not finished; finished videos stay. */
  "batches.cancel": z.object({ batchId }),
  "batches.remove": z.object({ batchId }),
  "batches.openFolder": z.object({ batchId }),
  /** A finished queued render's video (`queuedRenderId`) or a render of the history (`renderId`), to play inline. */
  "media.url": z.union([
    z.object({ queuedRenderId, output }).strict(),
    z.object({ renderId, output }).strict(),
  ]),
  "app.examples": empty,
  /** The starter templates ("New video"), without their pictures. */
  "gallery.list": empty,
  /** A template's tile: a frame rendered from it, made on first ask and kept. */
  "gallery.poster": z.object({ name: templateName }).strict(),
  /** Copies a template into a new folder of that name in the creator's Videos folder. */
  "gallery.create": z.object({ name: templateName, folderName: folderName }).strict(),
  "queue.cancel": z.object({ queuedRenderId }),
  "queue.retry": z.object({ queuedRenderId }),
  "queue.list": empty,
  "queue.redownload": z.object({ queuedRenderId }),
  "queue.remove": z.object({ queuedRenderId }),
  /** Opens a completed queued render's video with the system's default app. */
  "queue.openFile": z.object({ queuedRenderId, output }),
  "renders.list": z.object({
    limit: z.number().int().min(1).max(100).optional(),
    token: z.string().min(1).optional(),
  }),
  "renders.get": z.object({ renderId }),
  /** Frames, credits and the seconds a render would take on this computer (sampled frames). */
  "project.quote": z.object({ dir: projectDir, composition, settings: queuedRenderSettingsSchema }),
  /** Frames, credits and the time on the service (its queue) for these settings; nothing spent. */
  "renders.quote": z
    .object({ durationSeconds: z.number().positive(), ...renderSettingsShape, ...outputsShape })
    .superRefine(renderSettingsRule)
    .superRefine(outputsRule),
  /** The variables a render's composition declares (from its asset), for "Render again". */
  "renders.variables": z.object({
    render: z.object({ asset_id: z.string().min(1), composition: z.string().min(1) }),
  }),
  "renders.delete": z.object({ renderId }),
  /** Fetches a fresh signed URL and downloads a render from the history as a new queued render. */
  "renders.download": z.object({ renderId, outputDir: z.string().min(1).optional() }),
  "auth.status": empty,
  /**
   * An API key signs in before answering. Browser and device sign-in answer as soon as the page
   * URL or the code is known (status.signIn); the outcome arrives as an `auth` event.
   */
  "auth.login": z.discriminatedUnion("method", [
    z.object({ method: z.literal("api-key"), apiKey: z.string().trim().min(8).max(500) }),
    z.object({ method: z.literal("browser") }).strict(),
    z.object({ method: z.literal("device") }).strict(),
  ]),
  /** Stops a waiting browser/device sign-in. */
  "auth.cancel": empty,
  "auth.logout": empty,
  "settings.get": empty,
  "settings.set": settingsSchema.partial().strict(),
  "service.state": empty,
  "host.pickFolder": empty,
  /** A folder inside the allowed places (default: home), or `places: true` for their list. */
  "host.listFolders": z
    .object({ path: z.string().min(1).optional(), places: z.boolean().optional() })
    .strict(),
  "host.revealFile": z.object({ queuedRenderId, output }),
  "host.openExternal": z.object({ url: z.url({ protocol: /^https?$/ }) }),
} as const satisfies Record<IpcMethodName, z.ZodType>;

/** What each method answers. */
export interface IpcOutputs {
  "app.info": AppInfo;
  "project.scan": ProjectScanView;
  "project.dryRun": DryRunReport;
  "project.previewUrl": { url: string };
  "project.check": { findings: Finding[] };
  "variables.validate": { issues: VariableIssue[]; resolved: VariableValues };
  "project.pickImage": PickImageResult;
  "project.listImages": ImageListing;
  "queue.submit": QueuedRenderView;
  "batches.submit": BatchView;
  "batches.list": BatchView[];
  "batches.retryFailed": BatchView;
  "batches.cancel": BatchView;
  "batches.remove": { batchId: string };
  "batches.openFolder": { shown: boolean };
  "media.url": MediaSource;
  "app.examples": ExampleProject[];
  "gallery.list": StarterTemplate[];
  "gallery.poster": { url: string };
  "gallery.create": { dir: string };
  "queue.cancel": QueuedRenderView;
  "queue.retry": QueuedRenderView;
  "queue.list": QueuedRenderView[];
  "queue.redownload": QueuedRenderView;
  "queue.remove": { queuedRenderId: string };
  "queue.openFile": { opened: string };
  "renders.list": RenderList;
  "renders.get": RenderRecord;
  "renders.quote": RenderQuote;
  "project.quote": LocalRenderQuote;
  "renders.variables": { variables: VariableDefinition[]; schemaErrors: string[] };
  "renders.delete": { renderId: string };
  "renders.download": QueuedRenderView;
  "auth.status": AuthStatus;
  "auth.login": AuthStatus;
  "auth.logout": AuthStatus;
  "auth.cancel": AuthStatus;
  "settings.get": DesktopSettings;
  "settings.set": DesktopSettings;
  "service.state": ServiceState;
  "host.pickFolder": PickFolderResult;
  "host.listFolders": ProjectFolderListing;
  "host.revealFile": { shown: boolean };
  "host.openExternal": { opened: boolean };
}

export type IpcInput<M extends IpcMethodName> = z.input<(typeof ipcInputSchemas)[M]>;
export type IpcParsedInput<M extends IpcMethodName> = z.output<(typeof ipcInputSchemas)[M]>;

export function isIpcMethod(name: string): name is IpcMethodName {
  return Object.prototype.hasOwnProperty.call(ipcInputSchemas, name);
}

// ---------------------------------------------------------------- events

export interface QueuedRenderNotification {
  queuedRenderId: string;
  title: string;
  body: string;
  outcome: "completed" | "failed";
}

export interface IpcEvents extends Record<IpcEventName, unknown> {
  queuedRender: QueuedRenderView;
  batch: BatchView;
  service: ServiceState;
  /** A finished queued render; Electron also shows it as a desktop notification. */
  notification: QueuedRenderNotification;
  /** The sign-in changed: a browser/device sign-in finished, failed or was cancelled. */
  auth: AuthStatus;
}

export type IpcEventMessage = {
  [E in IpcEventName]: { event: E; payload: IpcEvents[E] };
}[IpcEventName];

// ---------------------------------------------------------------- the renderer's view

/** What the renderer calls: one async function per method, plus event subscription. */
export type DesktopApi = {
  [M in IpcMethodName]: undefined extends IpcInput<M>
    ? (input?: IpcInput<M>) => Promise<IpcOutputs[M]>
    : (input: IpcInput<M>) => Promise<IpcOutputs[M]>;
} & {
  on<E extends IpcEventName>(event: E, listener: (payload: IpcEvents[E]) => void): () => void;
};

/**
 * What the preload exposes as `window.svcDesktop`: the same methods, answering the `IpcResult`
 * envelope (an Error thrown across Electron's contextBridge keeps only its message, so the code
 * and hint travel as data and the renderer's transport turns them back into an `IpcCallError`).
 */
export type DesktopBridge = {
  [M in IpcMethodName]: (input?: IpcInput<M>) => Promise<IpcResult<IpcOutputs[M]>>;
} & {
  on<E extends IpcEventName>(event: E, listener: (payload: IpcEvents[E]) => void): () => void;
};

/**
 * What the Electron preload also exposes, as `window.svcDroppedFiles`: the disk path of a file or
 * folder dropped on the window (undefined when it does not come from the disk). Web mode has none.
 */
export interface DroppedFiles {
  pathFor(file: File): string | undefined;
}

/** A failed call on the renderer side: the main process's error, unchanged. */
export class IpcCallError extends Error {
  override readonly name = "IpcCallError";
  readonly code: string;
  readonly hint: string | undefined;
  constructor(error: IpcError) {
    super(error.message);
    this.code = error.code;
    this.hint = error.hint;
  }
}

export type { Finding, OutputFormat, Quality, Resolution };
