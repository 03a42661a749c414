// `npm start`: reads the settings (config.ts), picks the renderer — the sandbox on this machine,
// or the svc render service when SVC_API_URL and SVC_API_KEY are set — and the folder store, and
// serves the app. SIGTERM/SIGINT (a platform stopping the container, Ctrl+C) stop every running
// render and remove its files before the process exits.
import { ConfigError, loadConfig } from "./config";
import { buildApp } from "./app";
import { CompositionLibrary } from "./compositions";
import { RenderJobs, type Renderer } from "./jobs";
import { SandboxRenderer } from "./sandbox-renderer";
import { FolderStore } from "./storage";
import { playerModule } from "svc/player-assets";

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`svc preview-render: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  // The service client is loaded only when it is used; the engine never is (renders run in the
  // sandbox process), which keeps this process's start short after a cold start.
  const renderer: Renderer = config.service
    ? new (await import("./service-renderer")).ServiceRenderer(config.service)
    : new SandboxRenderer();
  const store = new FolderStore(config.storageDir);
  const jobs = new RenderJobs({
    renderer,
    store,
    workDir: config.workDir,
    maxConcurrent: config.maxConcurrentRenders,
    timeLimitSeconds: config.renderTimeLimitSeconds,
  });
  await jobs.sweepStaleWork();
  const compositions = new CompositionLibrary(config.compositionsDir, config.defaultComposition);
  const app = buildApp({
    compositions,
    jobs,
    store,
    renderMode: config.renderMode,
    maxBodyBytes: config.maxBodyBytes,
    renderer: config.service ? "service" : "sandbox",
  });
  // Built now rather than on the first page view: after a cold start the page opens at once.
  void playerModule().catch((error: unknown) =>
    console.error("svc preview-render: the player did not build:", error),
  );

  const address = await app.listen({ host: config.host, port: config.port });
  const names = await compositions.list();
  console.log(`svc preview-render listening on ${address}`);
  console.log(
    `  ${config.renderMode} renders ${config.service ? `on ${config.service.url}` : "in a sandbox process"}, ` +
      `videos in ${config.storageDir}, compositions: ${names.join(", ") || `none yet in ${config.compositionsDir}`}`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`svc preview-render: ${signal}, stopping renders`);
    await jobs.stopAll();
    await app.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

await main();
