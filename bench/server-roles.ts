// `svc server` processes for the scale-out benches (scale.ts, scale-cluster.ts): one role (api or
// worker) per process on a shared data dir and environment, its log kept, its URL read from the
// start line.
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";

const REPO = resolve(import.meta.dirname, "..");

/** One `svc server` process of the scale-out shape, its log kept. */
export interface RoleProcess {
  url: string;
  dataDir: string;
  log(): string;
  stop(): Promise<void>;
}

export async function startRole(
  role: "api" | "worker",
  dataDir: string,
  env: Record<string, string>,
): Promise<RoleProcess> {
  const args = [join(REPO, "bin/svc.js"), "server", "--role", role, "--port", "0"];
  args.push("--data-dir", dataDir, ...(role === "worker" ? ["--jobs", "1"] : []));
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (text: string) => (stdout += text));
  child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const url = await new Promise<string>((done, fail) => {
    const check = () => {
      const match = /svc server listening on (http:\/\/\S+)/.exec(stdout);
      if (match) done(match[1]!);
    };
    child.stdout!.on("data", check);
    void exited.then(() =>
      fail(new Error(`svc server --role ${role} exited at start:\n${stdout}\n${stderr}`)),
    );
  });
  return {
    url,
    dataDir,
    log: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
