// Test support: a real S3-compatible object store in a temp dir — OpenStack Swift from Debian
// (account, container and object servers plus a proxy whose pipeline has the `s3api` front end and
// `tempauth`), one device, one replica, no memcached. It checks SigV4 presigned URLs itself:
// signature, expiry and every signed header (so a signed Content-Length or x-amz-checksum-sha256
// the client changes is refused); it does not verify a body against x-amz-checksum-sha256 (see
// src/server/README.md). Listens on the given host (loopback by default, or an address inside a
// network namespace with `commandPrefix: ["ip", "netns", "exec", NS]`); the proxy on `port`, the
// three servers behind it on port+1..port+3 (free ports when port is 0). Every process gets
// SIGTERM from its parent's death (PR_SET_PDEATHSIG), so a killed test run leaves none behind.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

export const SWIFT_PACKAGES = ["swift-proxy", "swift-object", "swift-container", "swift-account"];
const SERVERS = ["account", "container", "object"] as const;
const START_TIMEOUT_MS = 90_000;
// Debian's interpreter, which has the swift package (a python3 earlier on PATH may not).
const PYTHON = "/usr/bin/python3";

/** Undefined when Swift is installed; otherwise why not and the apt line that installs it. */
export function swiftMissing(): string | undefined {
  const missing = [...SERVERS, "proxy"]
    .map(binary)
    .concat(PYTHON)
    .filter((file) => !existsSync(file));
  if (missing.length === 0) return undefined;
  return (
    `OpenStack Swift (the S3-compatible object store of the tests) is not installed ` +
    `(no ${missing.join(", ")}); as root: ` +
    `apt-get install -y --no-install-recommends ${SWIFT_PACKAGES.join(" ")}`
  );
}

export interface S3ServerOptions {
  /** Address every server binds to; default 127.0.0.1. */
  host?: string;
  /** The S3 endpoint's port; 0 (default) picks free ports. */
  port?: number;
  /** Created at start; default "svc-test". */
  bucket?: string;
  /** Run each server through this command, e.g. ["ip", "netns", "exec", "store"]. */
  commandPrefix?: string[];
}

/** Where the store is and how to sign in: what SVC_STORAGE_URL and the AWS_* variables hold. */
export interface S3Coordinates {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}

/** The environment of a service using the store, its objects under `prefix`. */
export function s3ServiceEnv(store: S3Coordinates, prefix: string): Record<string, string> {
  return {
    SVC_STORAGE_URL: `s3://${store.bucket}/${prefix}`,
    AWS_ENDPOINT_URL: store.endpoint,
    AWS_REGION: store.region,
    AWS_ACCESS_KEY_ID: store.accessKeyId,
    AWS_SECRET_ACCESS_KEY: store.secretAccessKey,
  };
}

export interface S3Server extends S3Coordinates {
  /** The servers' logs so far, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

function binary(name: string): string {
  return `/usr/bin/swift-${name}-server`;
}

// Ask for SIGTERM when the parent dies, then become the server (the setting survives exec).
const WITH_PARENT_DEATH_SIGNAL = [
  "import ctypes, os, signal, sys",
  "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)",
  "os.execv(sys.argv[1], sys.argv[1:])",
].join("\n");

// One partition, one replica, one device per ring: all a single-machine store needs.
const BUILD_RINGS = [
  "import sys",
  "from swift.common.ring import RingBuilder",
  "swift_dir, host = sys.argv[1], sys.argv[2]",
  "for name, port in zip(('account', 'container', 'object'), map(int, sys.argv[3:6])):",
  "    builder = RingBuilder(0, 1, 0)",
  "    builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': host, 'port': port,",
  "                     'replication_ip': host, 'replication_port': port,",
  "                     'device': 'd1', 'weight': 1.0, 'meta': ''})",
  "    builder.rebalance()",
  "    builder.get_ring().save('%s/%s.ring.gz' % (swift_dir, name))",
].join("\n");

export async function startS3Server(options: S3ServerOptions = {}): Promise<S3Server> {
  const missing = swiftMissing();
  if (missing) throw new Error(missing);
  const host = options.host ?? "127.0.0.1";
  const bucket = options.bucket ?? "svc-test";
  const prefix = options.commandPrefix ?? [];
  const ports = options.port
    ? [0, 1, 2, 3].map((offset) => options.port! + offset)
    : await freePorts(host, 4);
  const [proxyPort, ...serverPorts] = ports as [number, number, number, number];
  const dir = await mkdtemp(join(tmpdir(), "svc-s3-"));
  const secretAccessKey = randomBytes(18).toString("base64url");
  const accessKeyId = "svc:tester";
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const endpoint = `http://${urlHost}:${proxyPort}`;

  const children: ChildProcess[] = [];
  let output = "";
  const killAll = () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", killAll);

  const run = (argv: string[], name: string): ChildProcess => {
    const [command, ...args] = [...prefix, ...argv];
    const child = spawn(command!, args, { stdio: ["ignore", "pipe", "pipe"] });
    const collect = (chunk: Buffer) => {
      output += `${name}: ${chunk.toString("utf8")}`;
      if (output.length > 1_000_000) output = output.slice(-500_000);
    };
    child.stdout!.on("data", collect);
    child.stderr!.on("data", collect);
    children.push(child);
    return child;
  };

  const stop = async () => {
    process.removeListener("exit", killAll);
    await Promise.all(children.map((child) => stopChild(child)));
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await mkdir(join(dir, "devices", "d1"), { recursive: true });
    await writeFile(
      join(dir, "swift.conf"),
      [
        "[swift-hash]",
        `swift_hash_path_suffix = ${randomBytes(8).toString("hex")}`,
        "[storage-policy:0]",
        "name = Policy-0",
        "default = yes",
        "",
      ].join("\n"),
    );
    const rings = run([PYTHON, "-c", BUILD_RINGS, dir, host, ...serverPorts.map(String)], "rings");
    const ringsExit = await new Promise<number | null>((resolve) => rings.once("exit", resolve));
    if (ringsExit !== 0) throw new Error(`building the Swift rings failed:\n${output}`);

    const common = (port: number) => [
      "[DEFAULT]",
      `bind_ip = ${host}`,
      `bind_port = ${port}`,
      // One process per server, no forked workers: stop() has one pid to signal.
      "workers = 0",
      `user = ${userInfo().username}`,
      `swift_dir = ${dir}`,
      // No syslog here: logs go to stderr (-v) and are kept for failure messages.
      `log_address = ${join(dir, "no-syslog")}`,
    ];
    for (const [index, name] of SERVERS.entries()) {
      await writeFile(
        join(dir, `${name}-server.conf`),
        [
          ...common(serverPorts[index]!),
          `devices = ${join(dir, "devices")}`,
          "mount_check = false",
          "disable_fallocate = true",
          "[pipeline:main]",
          `pipeline = ${name}-server`,
          `[app:${name}-server]`,
          `use = egg:swift#${name}`,
          "",
        ].join("\n"),
      );
    }
    await writeFile(
      join(dir, "proxy-server.conf"),
      [
        ...common(proxyPort),
        "[pipeline:main]",
        "pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats " +
          "s3api tempauth copy slo dlo versioned_writes proxy-logging proxy-server",
        "[app:proxy-server]",
        "use = egg:swift#proxy",
        "account_autocreate = true",
        "[filter:catch_errors]",
        "use = egg:swift#catch_errors",
        "[filter:gatekeeper]",
        "use = egg:swift#gatekeeper",
        "[filter:healthcheck]",
        "use = egg:swift#healthcheck",
        "[filter:proxy-logging]",
        "use = egg:swift#proxy_logging",
        // tempauth needs a cache object; with no memcached listening (a closed port), Swift
        // error-limits the server and runs uncached.
        "[filter:cache]",
        "use = egg:swift#memcache",
        `memcache_servers = ${urlHost}:1`,
        "[filter:listing_formats]",
        "use = egg:swift#listing_formats",
        "[filter:s3api]",
        "use = egg:swift#s3api",
        "location = us-east-1",
        "[filter:tempauth]",
        "use = egg:swift#tempauth",
        `user_svc_tester = ${secretAccessKey} .admin`,
        "[filter:copy]",
        "use = egg:swift#copy",
        "[filter:slo]",
        "use = egg:swift#slo",
        "[filter:dlo]",
        "use = egg:swift#dlo",
        "[filter:versioned_writes]",
        "use = egg:swift#versioned_writes",
        "",
      ].join("\n"),
    );
    const servers = [...SERVERS, "proxy"].map((name) =>
      run(
        [
          PYTHON,
          "-c",
          WITH_PARENT_DEATH_SIGNAL,
          binary(name),
          join(dir, `${name}-server.conf`),
          "-v",
        ],
        name,
      ),
    );
    await createBucketWhenReady(
      { endpoint, accessKeyId, secretAccessKey, bucket },
      servers,
      () => output,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    endpoint,
    region: "us-east-1",
    accessKeyId,
    secretAccessKey,
    bucket,
    logs: () => output,
    stop,
  };
}

/** Polls until the proxy and the servers behind it answer: the bucket is created then. */
async function createBucketWhenReady(
  server: { endpoint: string; accessKeyId: string; secretAccessKey: string; bucket: string },
  servers: ChildProcess[],
  logs: () => string,
): Promise<void> {
  // Loaded here, so that vitest.config.ts can ask swiftMissing() without loading the SDK.
  const { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } =
    await import("@aws-sdk/client-s3");
  const client = new S3Client({
    endpoint: server.endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    maxAttempts: 1,
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  const probe = { Bucket: server.bucket, Key: "svc-readiness-probe" };
  let bucketCreated = false;
  let lastError: unknown;
  try {
    for (;;) {
      const exited = servers.find((child) => child.exitCode !== null);
      if (exited) throw new Error(`a Swift server exited during start:\n${logs().slice(-4000)}`);
      try {
        if (!bucketCreated) {
          await client.send(new CreateBucketCommand({ Bucket: server.bucket })).catch((error) => {
            if ((error as Error).name !== "BucketAlreadyOwnedByYou") throw error;
          });
          bucketCreated = true;
        }
        // The object server answers too.
        await client.send(new PutObjectCommand({ ...probe, Body: "ready" }));
        await client.send(new DeleteObjectCommand(probe));
        return;
      } catch (error) {
        lastError = error;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `the Swift S3 store at ${server.endpoint} was not ready in ${START_TIMEOUT_MS / 1000} s ` +
            `(${(lastError as Error).name}: ${(lastError as Error).message}):\n${logs().slice(-4000)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    client.destroy();
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Distinct free TCP ports on host (held open together so none is handed out twice). */
async function freePorts(host: string, count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, host, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(
    servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
  );
  return ports;
}
