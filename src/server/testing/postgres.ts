// Test support: a real PostgreSQL server from the machine's packages (Debian `postgresql`), made
// with initdb in a temp dir and run in the foreground on a loopback port (or on the address a
// multi-host test gives it), so tests of the scale-out shape never touch a system cluster.
// initdb and postgres refuse to run as root, so as root they run as the `postgres` user (the
// Debian package creates it) through setpriv, which execs in place so signals reach postgres. Trust authentication: this server holds only test data and listens
// only where the test says.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { appendFile, chmod, chown, mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export const POSTGRES_APT = "apt-get install -y postgresql";

export interface PostgresServer {
  host: string;
  port: number;
  /** URL of a database on this server. */
  url(database: string): string;
  /** Creates a fresh, empty database and answers its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  host?: string;
  port?: number;
  /** A command prefix the server runs under (e.g. `ip netns exec <ns>` for another host). */
  wrap?: string[];
}

/** The folder of initdb and postgres, or undefined when PostgreSQL is not installed. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => existsSync(join(root, name, "bin", "postgres")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  const found = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const dir = found.status === 0 ? found.stdout.trim() : "";
  return dir && existsSync(join(dir, "postgres")) ? dir : undefined;
}

/** Why the scale-out tests cannot run here, or undefined when they can. */
export function postgresUnavailable(): string | undefined {
  if (!postgresBinDir()) return `PostgreSQL is not installed (${POSTGRES_APT})`;
  if (process.getuid?.() === 0 && spawnSync("id", ["-u", "postgres"]).status !== 0) {
    return `running as root needs the postgres user that ${POSTGRES_APT} creates`;
  }
  return undefined;
}

/** A free TCP port on host (bound and released; the server binds it right after). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const unavailable = postgresUnavailable();
  if (unavailable) throw new Error(unavailable);
  const bin = postgresBinDir()!;
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? (await freePort(host));
  const dir = await mkdtemp(join(tmpdir(), "svc-postgres-"));
  const dataDir = join(dir, "data");
  const socketDir = join(dir, "socket");
  await mkdir(socketDir);
  const asRoot = process.getuid?.() === 0;
  // The postgres user must own its folders; the temp dir's parent is world-traversable.
  const owner = asRoot
    ? {
        uid: Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout),
        gid: Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout),
      }
    : undefined;
  if (owner) {
    await chmod(dir, 0o755);
    await chown(dir, owner.uid, owner.gid);
    await chown(socketDir, owner.uid, owner.gid);
  }
  const asOwner = (command: string, args: string[]): [string, string[]] =>
    asRoot
      ? [
          "setpriv",
          [
            `--reuid=${owner!.uid}`,
            `--regid=${owner!.gid}`,
            "--clear-groups",
            "--",
            command,
            ...args,
          ],
        ]
      : [command, args];

  const [initCommand, initArgs] = asOwner(join(bin, "initdb"), [
    "-D",
    dataDir,
    "-U",
    "svc",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-locale",
    "--no-sync",
  ]);
  const init = spawnSync(initCommand, initArgs, { encoding: "utf8" });
  if (init.status !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  }
  if (!["127.0.0.1", "::1", "localhost"].includes(host)) {
    // initdb trusts loopback only; on another host's address the clients are on its network.
    await appendFile(join(dataDir, "pg_hba.conf"), "host all all samenet trust\n");
  }
  const [command, args] = asOwner(join(bin, "postgres"), [
    "-D",
    dataDir,
    "-h",
    host,
    "-p",
    String(port),
    "-k",
    socketDir,
    // Test data only: durability costs time and buys nothing here.
    "-c",
    "fsync=off",
    "-c",
    "synchronous_commit=off",
    "-c",
    "full_page_writes=off",
    "-c",
    "max_connections=300",
    "-c",
    "listen_addresses=" + host,
  ]);
  const wrapped = options.wrap ? [...options.wrap, command, ...args] : [command, ...args];
  const child = spawn(wrapped[0]!, wrapped.slice(1), { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    log = (log + chunk).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = (database: string) => `postgres://svc@${hostInUrl(host)}:${port}/${database}`;
  try {
    await waitForConnection(url("postgres"), child, () => log);
  } catch (error) {
    child.kill("SIGKILL");
    await exited;
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    host,
    port,
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url("postgres") });
      await client.connect();
      try {
        await client.query(`create database "${name.replace(/"/g, "")}"`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop() {
      await stopChild(child, exited);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function hostInUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

async function waitForConnection(url: string, child: ChildProcess, log: () => string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited at start:\n${log()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) {
        throw new Error(`postgres did not accept connections in 30 s: ${String(error)}\n${log()}`);
      }
      // The server is still starting; ask again shortly.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Fast shutdown (SIGINT), then SIGKILL if it does not stop in 10 s. */
export async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
