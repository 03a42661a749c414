// What the desktop app's IPC methods answer (src/shared/ipc.ts lists the methods): the views of
// queued renders, batches, the service, sign-in, folders and images the renderer shows. Plain data,
// no behaviour; ipc.ts re-exports them so both sides import one module.
import type { ArchiveReport } from "./archive-report";
import type { ProjectScan } from "./composition-scan";
import type { IpcError, QueuedRenderSettings } from "./ipc";
import type { OutputFileFormat, OutputKind } from "./outputs";
import type { AspectRatio } from "./render-options";

export interface AppInfo {
  app: string;
  version: string;
}

export interface ProjectScanView extends ProjectScan {
  /** HTML files in the project folder, for the composition picker. */
  compositions: string[];
}

/** The dry run answers the CLI's archive report. */
export type DryRunReport = ArchiveReport;

/** One file of a queued render that renders several (sizes, a GIF, a poster): where it was saved. */
export interface QueuedRenderOutput {
  /** Position in the render's outputs (0: the main video, also the queued render's `outputPath`). */
  index: number;
  kind: OutputKind;
  format: OutputFileFormat;
  aspectRatio: AspectRatio;
  width: number;
  height: number;
  /** A still's time in seconds; null for a video. */
  time: number | null;
  /** Where it is saved; undefined until its download starts. */
  path: string | undefined;
  sizeBytes: number | undefined;
  /** Completed, but the file is no longer where it was saved. */
  missing: boolean;
}

/** The stages the queue shows (SPEC.md section 7), then where the queued render ended. */
export type QueuedRenderStage = "waiting" | "zip" | "upload" | "queued" | "rendering" | "download";
export type QueuedRenderStatus = "waiting" | "running" | "completed" | "failed" | "cancelled";

export interface QueuedRenderView {
  id: string;
  /** Increases with every change, so a listener can drop an out-of-date copy. */
  revision: number;
  title: string;
  status: QueuedRenderStatus;
  stage: QueuedRenderStage;
  /** 0..1 within the current stage. */
  progress: number;
  bytes: { done: number; total: number | undefined } | undefined;
  etaSeconds: number | undefined;
  createdAt: number;
  startedAt: number | undefined;
  finishedAt: number | undefined;
  source:
    | { type: "dir"; dir: string; composition: string }
    /** Rendered again from an uploaded project: no zipping or uploading, it starts at queued. */
    | { type: "asset"; assetId: string; composition: string }
    | { type: "render"; renderId: string }
    /** One row of a batch: rendered against the batch's one upload (`assetId` once uploaded). */
    | { type: "batch"; batchId: string; composition: string };
  /** The row of a batch this queued render renders (undefined for a queued render of its own). */
  batch: { batchId: string; row: number; fileName: string } | undefined;
  settings: QueuedRenderSettings;
  assetId: string | undefined;
  renderId: string | undefined;
  outputPath: string | undefined;
  sizeBytes: number | undefined;
  /**
   * Every file of a render with several outputs, in the render's order (the first is
   * `outputPath`); undefined for a render of one file.
   */
  outputs: QueuedRenderOutput[] | undefined;
  /** Completed, but the downloaded file is no longer where it was saved. */
  fileMissing: boolean;
  error: IpcError | undefined;
  /**
   * What the service's engine found about the page while rendering it (a missing image, a font that
   * did not load: the render record's `composition` warnings), each once; undefined in queued
   * renders queued before the field.
   */
  warnings: string[] | undefined;
}

/** Many videos from one template ("Render many…"): one upload, then one queued render per row. */
export interface BatchView {
  id: string;
  revision: number;
  /** The project folder's name. */
  title: string;
  createdAt: number;
  dir: string;
  composition: string;
  /** The batch's own folder, where every row's video is saved. */
  outputDir: string;
  outputPattern: string;
  settings: QueuedRenderSettings;
  rowCount: number;
  /** The one upload every row renders against. */
  upload: {
    stage: "waiting" | "zip" | "upload" | "done" | "failed";
    /** 0..1 within the stage. */
    progress: number;
    error: IpcError | undefined;
  };
  assetId: string | undefined;
}

/** A finished video to play inline: the downloaded file, or a fresh signed URL of the service. */
export interface MediaSource {
  url: string;
  /** The render's thumbnail, when the service has one. */
  poster: string | undefined;
  source: "file" | "service";
}

/** A project that ships with the app, for "Try an example". */
export interface ExampleProject {
  name: string;
  dir: string;
  description: string;
}

/** A starter template as the "New video" gallery shows it (src/shared/gallery.ts). */
export type { StarterTemplate } from "./gallery";

export type AuthSource =
  "env:SVC_API_KEY" | "env:SVC_ALIAS_API_KEY" | "credentials-file" | "keychain" | "local-service";

/** A browser or device sign-in that waits for the person (auth.login, until done or cancelled). */
export interface PendingSignIn {
  method: "browser" | "device";
  /** Browser: the sign-in page (a link when no browser could be opened). Device: the code's page. */
  url: string;
  /** Browser: whether the main process opened the system browser. */
  browserOpened: boolean;
  /** Device: the code to enter at `url`, e.g. BCDF-GHJK. */
  userCode: string | undefined;
  /** Device: `url` with the code filled in. */
  urlWithCode: string | undefined;
  /** When the sign-in gives up (ms since the epoch). */
  expiresAt: number;
}

export interface AuthStatus {
  signedIn: boolean;
  service: string;
  source: AuthSource | undefined;
  kind: "api_key" | "oauth" | undefined;
  user: { email: string; username: string } | undefined;
  credits: { remaining: number; used: number; plan: string } | undefined;
  /** Why the status is incomplete (e.g. the service cannot be reached). */
  problem: IpcError | undefined;
  /** A browser/device sign-in waiting for the person; `auth` events follow its progress. */
  signIn?: PendingSignIn | undefined;
  /** Why the last browser/device sign-in failed (cleared by the next one). */
  signInError?: IpcError | undefined;
}

export type ServiceStatus = "stopped" | "starting" | "ready" | "restarting" | "failed" | "remote";

export interface ServiceState {
  mode: "local" | "remote";
  status: ServiceStatus;
  url: string | undefined;
  /** Crash restarts since the app started. */
  restarts: number;
  message: string | undefined;
}

export type PickFolderResult =
  | { kind: "picked"; path: string }
  | { kind: "cancelled" }
  /** No native dialog (web mode): show the in-app browser (`host.listFolders`) from `root`. */
  | { kind: "browse"; root: string };

export interface FolderListing {
  root: string;
  path: string;
  parent: string | undefined;
  folders: Array<{ name: string; path: string }>;
}

/** A top folder the project browser may show: the home folder, or a drive the user owns. */
export interface FolderPlace {
  name: string;
  path: string;
}

/** What the web-mode project browser shows: one folder, or (path undefined) the list of places. */
export interface ProjectFolderListing {
  places: FolderPlace[];
  /** The folder shown; undefined: the list of places. */
  path: string | undefined;
  /** One folder up; "" at the top of a place (up leads to the list of places). */
  parent: string | undefined;
  /** Sub-folders; `project` when one holds an HTML file at its top (a composition). */
  folders: Array<{ name: string; path: string; project: boolean }>;
  /** The shown folder's HTML files (its compositions, when it is a project). */
  htmlFiles: string[];
  /** Why folders outside the places are not shown. */
  limit: string;
}

/** An image variable's file: `path` is relative to the project folder, with `/` separators. */
export type PickImageResult =
  | { kind: "picked"; path: string }
  | { kind: "cancelled" }
  /** No native dialog (web mode): browse with `project.listImages`. */
  | { kind: "browse"; root: string };

/** A folder inside a project, with its sub-folders and its image files. */
export interface ImageListing extends FolderListing {
  images: Array<{ name: string; path: string }>;
}
