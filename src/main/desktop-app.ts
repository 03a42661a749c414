// The desktop app's main-process services, wired once and shared by both transports: settings,
// the service connection (embedded service supervisor or a URL), the job queue, project tools
// (scan, dry run, preview, variables) and the host adapter, behind one `IpcRouter`. Runs in plain
// Node: Electron (electron.ts) and web mode (web.ts) only add a transport and a host.
import { readdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { checkBatch, describeBlockedRows } from "../shared/batch";
import type { DesktopSettings, MediaSource, ProjectScanView } from "../shared/ipc";
import { LOCAL_SERVICE_PORT } from "../shared/limits";
import { parseVariablesSchema, resolveVariables, validateVariables } from "../shared/variables";
import { loadClientConfig } from "../core/index";
import { scanProject } from "../core/index";
import { recordOutput } from "../core/index";
import { dryRunProject } from "../core/index";
import { createSystemFileHost, type FileHost } from "./file-host";
import { authHandlers } from "./auth-handlers";
import { listExamples } from "./examples";
import { appError } from "./ipc-errors";
import { batchRowCaptions } from "./batch-captions";
import { MediaServer } from "./media-server";
import { folderPlaces, listProjectFolders } from "./folder-browser";
import type { DesktopHost } from "./host";
import { IpcEventHub, IpcRouter, type IpcHandlers } from "./ipc-router";
import { JobManager } from "./job-manager";
import { PreviewServers } from "./preview-server";
import { ProjectChecks } from "./project-check";
import { LocalQuotes } from "./local-quote";
import { listProjectImages, projectImageValue, projectRoot } from "./project-images";
import { ServiceConnection } from "./service-connection";
import { Gallery } from "./gallery";
import { ServiceSupervisor } from "./service-supervisor";
import { defaultSettings, SettingsStore } from "./settings-store";

export const APP_NAME = "svc Desktop";
/** Port of the embedded service (SPEC.md section 0): the one the CLI uses too. */

export interface DesktopAppOptions {
  /** The package root (holds bin/svc.js). */
  appRoot: string;
  version: string;
  /** Where settings.json and jobs.json live. */
  dataDir: string;
  host: DesktopHost;
  /** Opening videos and choosing images (default: the system opener and the in-app browser). */
  files?: FileHost;
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** Embedded service: port (default 7733), data dir (default ~/.svc/local), extra env. */
  localService?: { port?: number; dataDir?: string; env?: NodeJS.ProcessEnv };
  /** Defaults for settings not yet saved. */
  settingsDefaults?: Partial<DesktopSettings>;
  /** Job status polling interval (default 2 s). */
  pollIntervalMs?: number;
  /** The bundled example projects (default: <appRoot>/examples). */
  examplesDir?: string;
  /** The starter templates (default: <appRoot>/gallery). */
  galleryDir?: string;
  /** Where "New video" makes projects (default: the Videos folder of the home folder). */
  videosDir?: string;
}

export interface DesktopApp {
  router: IpcRouter;
  events: IpcEventHub;
  jobs: JobManager;
  supervisor: ServiceSupervisor;
  settings: SettingsStore;
  close(): Promise<void>;
}

/** The app data dir: SVC_DESKTOP_DATA_DIR, else the given default (Electron's userData). */
export function desktopDataDir(env: NodeJS.ProcessEnv, fallback: string): string {
  return env.SVC_DESKTOP_DATA_DIR?.trim() || fallback;
}

export async function startDesktopApp(options: DesktopAppOptions): Promise<DesktopApp> {
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  const clientConfig = loadClientConfig(env);
  const localDataDir = options.localService?.dataDir ?? clientConfig.localDataDir;
  const settings = await SettingsStore.open(join(options.dataDir, "settings.json"), {
    ...defaultSettings(home),
    ...options.settingsDefaults,
  });
  const supervisor = new ServiceSupervisor({
    svcBin: join(options.appRoot, "bin", "svc.js"),
    dataDir: localDataDir,
    port: options.localService?.port ?? LOCAL_SERVICE_PORT,
    ...(options.localService?.env ? { env: options.localService.env } : {}),
  });
  const connection = new ServiceConnection({
    settings,
    supervisor,
    localDataDir,
    configDir: clientConfig.configDir,
    env,
    userAgent: `svc-desktop/${options.version}`,
  });
  const events = new IpcEventHub();
  const { host } = options;
  const files = options.files ?? createSystemFileHost(env);
  const jobs = await JobManager.open({
    file: join(options.dataDir, "jobs.json"),
    service: connection,
    concurrency: () => settings.get().concurrency,
    downloadsDir: () => settings.get().downloadsDir,
    ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
    notify: (notification) => {
      events.emit("notification", notification);
      host.notify(notification);
    },
  });
  const preview = new PreviewServers();
  const checks = new ProjectChecks(join(options.appRoot, "bin", "svc.js"));
  const quotes = new LocalQuotes(join(options.appRoot, "bin", "svc.js"));
  const media = new MediaServer();
  const gallery = new Gallery({
    galleryDir: options.galleryDir ?? join(options.appRoot, "gallery"),
    cacheDir: join(options.dataDir, "gallery-tiles"),
    svcBin: join(options.appRoot, "bin", "svc.js"),
    projectsDir: options.videosDir ?? join(home, "Videos"),
  });

  jobs.onUpdate((job) => events.emit("job", job));
  jobs.onBatchUpdate((batch) => events.emit("batch", batch));
  supervisor.onState((state) => {
    if (connection.mode === "local") events.emit("service", state);
  });
  settings.onChange((next, previous) => {
    if (next.concurrency !== previous.concurrency) jobs.start();
    if (next.service !== previous.service) {
      if (next.service !== "local") void supervisor.stop();
      events.emit("service", connection.state());
    }
  });

  /**
   * A folder without index.html opens with its first other HTML file (the picker offers the
   * rest); one with no HTML file at all is refused in the Project screen's words.
   */
  const scan = async (dir: string, composition: string | undefined): Promise<ProjectScanView> => {
    const compositions = await htmlFiles(resolve(dir));
    let chosen = composition;
    if (!chosen && !compositions.includes("index.html")) {
      chosen = compositions.find((file) => !file.includes("/")) ?? compositions[0];
      const info = await stat(resolve(dir)).catch(() => undefined);
      if (!chosen && info?.isDirectory())
        throw appError(
          "no_composition",
          `${basename(resolve(dir))} holds no composition: there is no HTML file in ${resolve(dir)}.`,
          "Choose another folder with Choose folder… (folders that hold one are marked Project), or try an example.",
        );
    }
    const result = await scanProject(dir, chosen ? { composition: chosen } : {});
    return { ...result, compositions };
  };

  /** A finished render's file (`output`: which one) from the service: a fresh signed URL. */
  const fromService = async (renderId: string, output = 0): Promise<MediaSource> => {
    const record = await (await connection.client()).getRender(renderId);
    const file = recordOutput(record, output);
    if (record.status !== "completed" || !file?.url)
      throw appError(
        "render_not_completed",
        `Render ${renderId} is ${record.status}; there is no video to play.`,
      );
    return { url: file.url, poster: file.thumbnail_url ?? undefined, source: "service" };
  };
  /** A downloaded file from the media server, with its thumbnail when it can be had. */
  const fromFile = async (jobId: string, output = 0): Promise<MediaSource | undefined> => {
    const file = await jobs.outputFile(jobId, output).catch(() => undefined);
    if (!file) return undefined;
    const renderId = jobs.get(jobId).renderId;
    const poster = renderId
      ? await connection
          .client()
          .then((client) => client.getRender(renderId))
          .then((record) => recordOutput(record, output)?.thumbnail_url ?? undefined)
          .catch(() => undefined)
      : undefined;
    return { url: await media.urlFor(file), poster, source: "file" };
  };

  const auth = authHandlers({
    connection,
    host,
    events,
    userAgent: `svc-desktop/${options.version}`,
  });
  const handlers: IpcHandlers = {
    "app.info": async () => ({ app: APP_NAME, version: options.version }),
    "project.scan": ({ dir, composition }) => scan(dir, composition),
    "project.dryRun": ({ dir, composition, variables }) =>
      dryRunProject({ dir, composition, variables }),
    "project.previewUrl": async ({ dir, composition }) => {
      const project = await scan(dir, composition);
      return { url: await preview.urlFor(project.root, project.composition) };
    },
    "project.check": async ({ dir, composition, variables }) => {
      const project = await scan(dir, composition);
      const findings = await checks.check({
        root: project.root,
        composition: project.composition,
        ...(variables ? { variables } : {}),
      });
      return { findings };
    },
    "project.quote": async ({ dir, composition, settings }) => {
      const project = await scan(dir, composition);
      return quotes.quote(project.root, project.composition, settings);
    },
    "variables.validate": async ({ dir, composition, values }) => {
      const project = await scan(dir, composition);
      return {
        issues: validateVariables(project.variables, values),
        resolved: resolveVariables(project.variables, values),
      };
    },
    "project.pickImage": async ({ dir }) => {
      const root = await projectRoot(dir);
      const picked = await files.pickImage(root);
      return picked.kind === "picked"
        ? { kind: "picked", path: await projectImageValue(root, picked.path) }
        : picked;
    },
    "project.listImages": ({ dir, path }) => listProjectImages(dir, path),
    "jobs.submit": async (input) => {
      // The service checks an asset id (and the variables against its schema) when it is submitted.
      if ("assetId" in input) return jobs.submitFromAsset(input);
      // Fail before queueing when the folder is not a project (the rest is checked when it runs).
      const project = await scan(input.dir, input.composition);
      return jobs.submit({
        dir: project.root,
        composition: project.composition,
        settings: input.settings,
        outputDir: input.outputDir,
      });
    },
    "batches.submit": async (input) => {
      const project = await scan(input.dir, input.composition);
      // The renderer checked the rows; check again, since it is not trusted.
      const check = checkBatch(
        project.variables,
        { columns: input.columns, rows: input.rows },
        {
          strict: input.settings.strictVariables ?? false,
          pattern: input.outputPattern,
          format: input.settings.format,
          project: basename(project.root),
        },
      );
      if (check.blocked) {
        throw appError(
          "batch_invalid",
          [...check.problems, ...describeBlockedRows(check)].join(" "),
          "Fix or drop the rows marked in the table, then render again.",
        );
      }
      const captions = await batchRowCaptions(
        project.root,
        check.rows,
        new Map(input.rows.flatMap((row) => (row.captionCues ? [[row.row, row.captionCues]] : []))),
        input.settings.captions,
      );
      return jobs.submitBatch({
        dir: project.root,
        composition: project.composition,
        settings: input.settings,
        rows: check.rows.map((row, index) => ({
          row: row.row,
          values: row.values,
          fileName: row.fileName,
          captions: captions[index],
        })),
        outputPattern: input.outputPattern,
        title: basename(project.root),
      });
    },
    "batches.list": async () => jobs.listBatches(),
    "batches.retryFailed": ({ batchId }) => jobs.retryFailedRows(batchId),
    "batches.cancel": ({ batchId }) => jobs.cancelBatch(batchId),
    "batches.remove": async ({ batchId }) => {
      await jobs.removeBatch(batchId);
      return { batchId };
    },
    "batches.openFolder": async ({ batchId }) => ({
      shown: await host.revealFile(await jobs.batchFolder(batchId)),
    }),
    "media.url": async (input) => {
      const output = input.output ?? 0;
      if ("jobId" in input) {
        const job = jobs.get(input.jobId);
        const local = await fromFile(job.id, output);
        if (local) return local;
        if (!job.renderId || job.status !== "completed")
          throw appError("job_not_completed", "This job has no finished video yet.");
        return fromService(job.renderId, output);
      }
      const downloaded = jobs
        .list()
        .find((job) => job.renderId === input.renderId && job.status === "completed");
      return (
        (downloaded && (await fromFile(downloaded.id, output))) ??
        fromService(input.renderId, output)
      );
    },
    "app.examples": () => listExamples(options.examplesDir ?? join(options.appRoot, "examples")),
    "gallery.list": () => gallery.list(),
    "gallery.poster": ({ name }) => gallery.poster(name),
    "gallery.create": ({ name, folderName }) => gallery.create(name, folderName),
    "jobs.cancel": ({ jobId }) => jobs.cancel(jobId),
    "jobs.retry": ({ jobId }) => jobs.retry(jobId),
    "jobs.list": async () => jobs.list(),
    "jobs.redownload": ({ jobId }) => jobs.redownload(jobId),
    "jobs.remove": async ({ jobId }) => {
      await jobs.remove(jobId);
      return { jobId };
    },
    "jobs.openFile": async ({ jobId, output }) => {
      const file = await jobs.outputFile(jobId, output);
      await files.openFile(file);
      return { opened: file };
    },
    "renders.list": async ({ limit, token }) =>
      (await connection.client()).listRenders({
        ...(limit !== undefined ? { limit } : {}),
        ...(token !== undefined ? { token } : {}),
      }),
    "renders.get": async ({ renderId }) => (await connection.client()).getRender(renderId),
    "renders.quote": async ({
      durationSeconds,
      fps,
      quality,
      format,
      resolution,
      aspectRatio,
      outputs,
    }) =>
      (await connection.client()).quoteRender({
        duration: durationSeconds,
        fps,
        quality,
        format,
        resolution,
        ...(aspectRatio ? { aspect_ratio: aspectRatio } : {}),
        ...(outputs ? { outputs } : {}),
      }),
    "renders.variables": async ({ render }) => {
      const found = await (
        await connection.client()
      ).getAssetComposition(render.asset_id, render.composition);
      const schema = parseVariablesSchema(found.variables_json);
      return { variables: schema.variables, schemaErrors: schema.errors };
    },
    "renders.delete": async ({ renderId }) => {
      const deleted = await (await connection.client()).deleteRender(renderId);
      return { renderId: deleted.render_id };
    },
    "renders.download": async ({ renderId, outputDir }) => {
      const record = await (await connection.client()).getRender(renderId);
      return jobs.downloadFromHistory(record, outputDir);
    },
    ...auth,
    "settings.get": async () => settings.get(),
    "settings.set": async (change) => {
      const before = settings.get();
      const after = await settings.update(change);
      // A sign-in started against the old service or store would finish against the wrong one.
      if (before.service !== after.service || before.credentialStore !== after.credentialStore)
        await auth["auth.cancel"]({});
      return after;
    },
    "service.state": async () => connection.state(),
    "host.pickFolder": () => host.pickFolder(),
    "host.listFolders": async (input) =>
      listProjectFolders(await folderPlaces(home, settings.get().folderBrowserRoot), input),
    // By job, not by path: the renderer can only show files the app itself wrote.
    "host.revealFile": async ({ jobId, output }) => ({
      shown: await host.revealFile(await jobs.outputFile(jobId, output)),
    }),
    "host.openExternal": async ({ url }) => ({ opened: await host.openExternal(url) }),
  };

  jobs.start();
  return {
    router: new IpcRouter(handlers, events),
    events,
    jobs,
    supervisor,
    settings,
    close: async () => {
      checks.close();
      quotes.close();
      await jobs.close();
      await preview.close();
      await media.close();
      await supervisor.stop();
    },
  };
}

/** HTML files at the top of the project and one folder down (compositions/*.html), sorted. */
async function htmlFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    if (entry.isFile() && /\.html?$/i.test(entry.name)) found.push(entry.name);
    if (entry.isDirectory()) {
      const inner = await readdir(join(root, entry.name), { withFileTypes: true }).catch(() => []);
      for (const file of inner) {
        if (file.isFile() && /\.html?$/i.test(file.name)) found.push(`${entry.name}/${file.name}`);
      }
    }
  }
  return found.sort();
}
