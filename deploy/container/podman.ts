// Test support: podman as this machine and CI run it (root, runc, cgroupfs, a containers.conf
// with no default ulimits, logs kept in files), the local stand-in base images, and the images of
// the service, the template and the dev store built from this checkout. Nothing is pulled:
// `--pull=never` everywhere, the bases come from deploy/container/stand-in-base.sh. Podman keeps
// layers between runs on one machine, so a second build of unchanged sources takes seconds.
import { execFile, spawn, spawnSync } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";

export const REPO = resolve(import.meta.dirname, "../..");
const CONTAINERS_DIR = resolve(import.meta.dirname);
const HOST_CA = "/etc/ssl/certs/ca-certificates.crt";
const APT = "apt-get install -y --no-install-recommends podman runc catatonit mmdebstrap";

/** The images the tests build, by tag. */
export const IMAGES = {
  service: "localhost/svc:latest",
  template: "localhost/svc-preview-render:latest",
  postgres: "localhost/svc-postgres:latest",
  s3Store: "localhost/svc-s3-store:latest",
} as const;

/** Undefined when podman can run here; otherwise why not (and how to fix it). */
export function podmanUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "podman runs as root here (run the tests as root)";
  const missing = ["podman", "runc", "catatonit", "mmdebstrap", "kubectl"].filter(
    (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0,
  );
  if (missing.length > 0) {
    return `${missing.join(", ")} not installed; as root: ${APT} kubernetes-client`;
  }
  return undefined;
}

let confFile: string | undefined;

/** The environment podman runs with: CONTAINERS_CONF naming our containers.conf. */
async function podmanEnv(): Promise<NodeJS.ProcessEnv> {
  if (!confFile) {
    const dir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "svc-ci");
    await mkdir(dir, { recursive: true });
    confFile = join(dir, "containers.conf");
    // default_ulimits: podman's defaults fail setrlimit on this kernel; k8s-file: `podman logs`
    // works without journald.
    await writeFile(confFile, '[containers]\ndefault_ulimits = []\nlog_driver = "k8s-file"\n');
  }
  return { ...process.env, CONTAINERS_CONF: confFile };
}

export interface RunOptions {
  input?: string;
  signal?: AbortSignal;
  /** Passed through to the test's stderr as it comes (long builds). */
  echo?: boolean;
  /** stderr is part of the answer too (`podman logs` gives a container's stderr on its own). */
  withStderr?: boolean;
}

/** Runs a command with podman's environment; resolves stdout, rejects with stderr's tail. */
export async function run(
  command: string,
  args: string[],
  options: RunOptions = {},
): Promise<string> {
  const env = await podmanEnv();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      env,
      cwd: REPO,
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.signal ? { signal: options.signal } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (options.echo) process.stderr.write(chunk);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-20_000);
      if (options.withStderr) stdout += chunk;
      if (options.echo) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolvePromise(stdout);
      else
        reject(
          new Error(`${command} ${args.join(" ")} exited with ${code}:\n${stderr.slice(-4000)}`),
        );
    });
    child.stdin.end(options.input ?? "");
  });
}

/** `podman` with the flags this machine needs (runc: crun refuses the hybrid cgroups). */
export function podman(args: string[], options: RunOptions = {}): Promise<string> {
  return run("podman", ["--runtime", "runc", "--cgroup-manager", "cgroupfs", ...args], options);
}

/** The stand-in node:22-bookworm-slim and debian:bookworm-slim (made once per machine). */
export async function ensureBaseImages(signal?: AbortSignal): Promise<void> {
  await run("bash", [join(CONTAINERS_DIR, "stand-in-base.sh")], { echo: true, signal });
}

/**
 * `podman build` of a Dockerfile, never pulling, in Docker's format (OCI images drop
 * HEALTHCHECK). The machine's CA bundle reaches npm inside the build as a mounted file named by
 * NODE_EXTRA_CA_CERTS, never as a layer. `--jobs 2` builds independent stages side by side, as
 * BuildKit does: the service's runtime stage (Debian's browser and FFmpeg, mostly unpacking)
 * meanwhile its modules stage waits on npm and compiles better-sqlite3; podman's default is one
 * stage after the other.
 */
export async function buildImage(
  tag: string,
  dockerfile: string,
  context: string,
  signal?: AbortSignal,
): Promise<void> {
  const ca = existsSync(HOST_CA)
    ? [
        "--build-arg",
        "NODE_EXTRA_CA_CERTS=/run/host-ca.crt",
        "-v",
        `${HOST_CA}:/run/host-ca.crt:ro`,
      ]
    : [];
  await podman(
    [
      "build",
      "--format",
      "docker",
      "--pull=never",
      "--jobs",
      "2",
      ...ca,
      "-f",
      dockerfile,
      "-t",
      tag,
      context,
    ],
    { echo: true, ...(signal ? { signal } : {}) },
  );
}

/**
 * Every image the tests use, built from this checkout (cached layers make it quick the 2nd time).
 * The service's and the template's images share their first layers (the same steps, see the root
 * Dockerfile), so the template's build after the service's adds only the template. The dev store's
 * two images build meanwhile: mostly package downloads, while the service's build compiles.
 */
export async function buildAllImages(signal?: AbortSignal): Promise<Record<string, number>> {
  const seconds: Record<string, number> = {};
  const timed = async (name: string, build: () => Promise<void>) => {
    const started = Date.now();
    await build();
    seconds[name] = Math.round((Date.now() - started) / 1000);
  };
  await timed("bases", () => ensureBaseImages(signal));
  await Promise.all([
    (async () => {
      await timed("service", () =>
        buildImage(IMAGES.service, join(REPO, "Dockerfile"), REPO, signal),
      );
      await timed("template", () =>
        buildImage(
          IMAGES.template,
          join(REPO, "templates/preview-render/Dockerfile"),
          REPO,
          signal,
        ),
      );
    })(),
    timed("postgres", () =>
      buildImage(
        IMAGES.postgres,
        join(CONTAINERS_DIR, "postgres/Dockerfile"),
        join(CONTAINERS_DIR, "postgres"),
        signal,
      ),
    ),
    timed("s3Store", () =>
      buildImage(
        IMAGES.s3Store,
        join(CONTAINERS_DIR, "s3-store/Dockerfile"),
        join(CONTAINERS_DIR, "s3-store"),
        signal,
      ),
    ),
  ]);
  return seconds;
}

/** The image's layers (digests of their contents), base first. */
export async function imageLayers(tag: string): Promise<string[]> {
  const [image] = JSON.parse(await podman(["image", "inspect", tag])) as {
    RootFS: { Layers: string[] };
  }[];
  return image!.RootFS.Layers;
}

/**
 * What a registry would store for each image: its layers gzip-compressed, in bytes. The images
 * are saved together (`podman save -m`, uncompressed), so a layer they share is compressed once,
 * not once per image (the service's and the template's share all but their last layers): half
 * the work of `podman save --compress` per image. Compressed at zlib's fastest level (1), an
 * upper bound of what a registry stores: a registry's gzip (level 6) packs tighter, and level 1
 * takes a fraction of the CPU on the CI's two cores. Level 6 came out 3.6% smaller than podman's
 * own compression of the same service image (452 MiB against 469 MiB, 2026-11-28), both far
 * under the 700 MB the issue allows.
 */
export async function compressedSizes(tags: string[]): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), "svc-image-"));
  try {
    const archive = join(dir, "images.tar");
    await podman(["save", "-m", "--format", "docker-archive", "-o", archive, ...tags]);
    const unpacked = join(dir, "images");
    await mkdir(unpacked);
    await run("tar", ["-xf", archive, "-C", unpacked]);
    await rm(archive);
    const manifest = JSON.parse(await readFile(join(unpacked, "manifest.json"), "utf8")) as {
      RepoTags: string[];
      Layers: string[];
    }[];
    const layers = [...new Set(manifest.flatMap((image) => image.Layers))];
    const sizes = new Map<string, number>();
    // Two at a time: zlib compresses on libuv's threads, one core each.
    const queue = [...layers];
    await Promise.all(
      [0, 1].map(async () => {
        for (let layer = queue.shift(); layer; layer = queue.shift()) {
          sizes.set(layer, await gzippedSize(join(unpacked, layer)));
        }
      }),
    );
    const result: Record<string, number> = {};
    for (const tag of tags) {
      const image = manifest.find((entry) => entry.RepoTags.includes(tag));
      if (!image) throw new Error(`podman save gave no image tagged ${tag}`);
      result[tag] = image.Layers.reduce((total, layer) => total + sizes.get(layer)!, 0);
    }
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function gzippedSize(file: string): Promise<number> {
  let bytes = 0;
  await pipeline(
    createReadStream(file),
    createGzip({ level: 1 }),
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done();
      },
    }),
  );
  return bytes;
}

/** The image's size as stored here (layers unpacked), in bytes. */
export async function unpackedSize(tag: string): Promise<number> {
  return Number((await podman(["image", "inspect", "--format", "{{.Size}}", tag])).trim());
}

/** The address of a pod on podman's network (what a ClusterIP Service would give). */
export async function podAddress(pod: string): Promise<string> {
  const infra = (await podman(["pod", "inspect", "--format", "{{.InfraContainerID}}", pod])).trim();
  const address = (
    await podman([
      "inspect",
      "--format",
      "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
      infra,
    ])
  )
    .trim()
    .split(" ")[0];
  if (!address) throw new Error(`pod ${pod} has no address`);
  return address;
}

/** Runs a command and answers its exit code, for cleanup that may find nothing to remove. */
export function tryRun(command: string, args: string[]): Promise<number> {
  return podmanEnv().then(
    (env) =>
      new Promise((resolvePromise) => {
        execFile(command, args, { env }, (error) =>
          resolvePromise(error ? ((error as { code?: number }).code ?? 1) : 0),
        );
      }),
  );
}
