// `npm start`: reads the settings (config.ts), picks the renderer — the sandbox on this machine,
// or the svc render service when SVC_API_URL and SVC_API_KEY are set — and the store (a folder,
// or the bucket when S3_BUCKET is set, checked before listening), and serves the app.
// SIGTERM/SIGINT (a platform stopping the container, Ctrl+C) stop every running render and
// remove its files before the process exits.
import { ConfigError, isLoopbackHost, loadConfig, type S3Settings } from "./config";
import { buildApp } from "./app";
import { CompositionLibrary } from "./compositions";
import { RenderJobs, type Renderer } from "./jobs";
import { SandboxRenderer } from "./sandbox-renderer";
import { FolderStore, type RenderStore } from "./storage";
import { playerModule } from "svc/player-assets";

/** A setting the server cannot start with: the message, exit code 2. */
function refuseToStart(message: string): never {
  console.error(`svc preview-render: ${message}`);
  process.exit(2);
}

/** The bucket's store, once it answers; the SDK is loaded only when a bucket is configured. */
async function openS3Store(settings: S3Settings): Promise<RenderStore> {
  const { S3Store, S3SetupError } = await import("./s3-storage");
  const store = new S3Store(settings);
  try {
    await store.check();
  } catch (error) {
    if (error instanceof S3SetupError) refuseToStart(error.message);
    throw error;
  }
  return store;
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) refuseToStart(error.message);
    throw error;
  }
  // The service client is loaded only when it is used; the engine never is (renders run in the
  // sandbox process), which keeps this process's start short after a cold start.
  const renderer: Renderer = config.service
    ? new (await import("./service-renderer")).ServiceRenderer(config.service)
    : new SandboxRenderer({
        allowNetwork:
          config.allowedOrigins === "*"
            ? true
            : config.allowedOrigins.length > 0
              ? { origins: config.allowedOrigins }
              : false,
      });
  const store = config.s3 ? await openS3Store(config.s3) : new FolderStore(config.storageDir);
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
    renderToken: config.renderToken,
    allowedOrigins: config.allowedOrigins,
    loopbackOnly: isLoopbackHost(config.host),
  });
  // Built now rather than on the first page view: after a cold start the page opens at once.
  void playerModule().catch((error: unknown) =>
    console.error("svc preview-render: the player did not build:", error),
  );

  const address = await app.listen({ host: config.host, port: config.port });
  const names = await compositions.list();
  // One write: whoever waits for the "listening" line gets the settings line with it.
  console.log(
    `svc preview-render listening on ${address}\n` +
      `  POST /api/render ${config.renderToken ? "needs RENDER_API_TOKEN" : "is open to anyone who can reach the server"}; ` +
      `renders' page network: ${config.allowedOrigins === "*" ? "any origin" : config.allowedOrigins.length > 0 ? config.allowedOrigins.join(", ") : "off (composition files only)"}\n` +
      `  ${config.renderMode} renders ${config.service ? `on ${config.service.url}` : "in a sandbox process"}, ` +
      `videos in ${config.s3 ? `s3://${config.s3.bucket}/${config.s3.prefix}` : config.storageDir}, compositions: ${names.join(", ") || `none yet in ${config.compositionsDir}`}`,
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
