// The sandbox: a child process that renders one composition with svc's engine and exits. The
// server starts it per render (sandbox-renderer.ts) with its own process group and temp folder,
// sends the job over IPC, and kills the whole group at the time limit; nothing here needs to
// cooperate for that. Progress and the outcome go back over IPC as plain JSON messages.
import { isEngineError, renderComposition, type RenderCompositionOptions } from "svc/engine";

export interface SandboxJob {
  type: "render";
  /** This render's private temp folder: the engine's scratch files and Chromium's profile. */
  tempDir: string;
  options: Omit<RenderCompositionOptions, "signal" | "onProgress">;
}

export type SandboxMessage =
  | { type: "progress"; framesDone: number; framesTotal: number; etaSeconds?: number }
  | { type: "done"; warnings: string[] }
  | { type: "failed"; code: string; message: string };

function send(message: SandboxMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

process.once("message", (job: SandboxJob) => {
  // Set here, not in the environment the sandbox starts with: TypeScript's compile cache stays in
  // the shared temp folder, and only what this render creates lands in its own.
  process.env.TMPDIR = job.tempDir;
  const controller = new AbortController();
  // A polite stop cancels the render (the engine removes its files), and so does losing the
  // server: a render nobody will collect must not run on unsupervised, past any time limit.
  process.once("SIGTERM", () => controller.abort());
  process.once("disconnect", () => controller.abort());
  void renderComposition({
    ...job.options,
    signal: controller.signal,
    onProgress: (progress) =>
      void send({
        type: "progress",
        framesDone: progress.framesDone,
        framesTotal: progress.framesTotal,
        ...(progress.etaSeconds !== undefined ? { etaSeconds: progress.etaSeconds } : {}),
      }),
  })
    .then(
      (result) => send({ type: "done", warnings: result.warnings }),
      (error: unknown) =>
        send(
          isEngineError(error)
            ? {
                type: "failed",
                code: error.code,
                message: error.hint ? `${error.message} ${error.hint}` : error.message,
              }
            : {
                type: "failed",
                code: "render_failed",
                message: error instanceof Error ? error.message : String(error),
              },
        ),
    )
    .finally(() => process.disconnect?.());
});
