// Libraries a page loads from a CDN (jsdelivr, unpkg, cdnjs, esm.sh, Skypack), answered with the
// same file of the same version from the npm registry, so previews, local renders and the service
// (whose pages never reach the network) all draw with the same bytes. svc fetches, never the page:
// one package tarball per version, checked against the registry's integrity, unpacked into
// files stored by content hash (blobs/<sha256>), with a manifest per version
// (packages/<name>@<version>.json: path -> hash) and an index (index.json) of what each tag or
// range resolved to. A tag or range (`@3`, `@latest`, none) is resolved once and pinned: later
// renders use the pinned version even when the tag has moved since, until the cache is cleared,
// so a render never changes because of a publish. Every write is atomic (temp file, rename).
// Registry, proxy and CA come from npm's own configuration (npm-config.ts).
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import type * as Semver from "semver";
import { extract } from "tar-stream";
import type { NpmFileRequest } from "../shared/cdn";
import { readJsonFile, writeJsonFileAtomic } from "./atomic-file";
import { npmConfig, registryFetch, type NpmConfig } from "./npm-config";

// semver is loaded when a version range is first read, not with the engine at every start.
const requireHere = createRequire(import.meta.url);
let semverModule: typeof Semver | undefined;
function semverLib(): typeof Semver {
  return (semverModule ??= requireHere("semver") as typeof Semver);
}

/** Larger tarballs are refused: a CDN script a page loads is far smaller. */
export const MAX_TARBALL_BYTES = 64 * 1024 * 1024;
/** Largest unpacked package kept (all files together). */
export const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;
/** The longest svc waits for the registry before answering without it. */
const REGISTRY_TIMEOUT_MS = 60_000;

/** Which version of which package answered a CDN URL; a render's record lists them. */
export interface ResolvedLibrary {
  packageName: string;
  /** As the URL wrote it (`3`, `^1.2`); "latest" when it named none. */
  requested: string;
  version: string;
  /** The registry's integrity string of the tarball (`sha512-...`). */
  integrity: string;
  path: string;
}

export interface LibraryFile extends ResolvedLibrary {
  body: Buffer;
}

export type LibraryProblemCode = "not-on-npm" | "registry-unreachable" | "not-in-package";

export interface LibraryProblem {
  code: LibraryProblemCode;
  message: string;
  hint: string;
}

export type LibraryAnswer =
  { ok: true; file: LibraryFile } | { ok: false; problem: LibraryProblem };

interface IndexFile {
  /** `<name>@<requested>` -> the version it resolved to, and when. */
  specs: Record<string, { version: string; resolvedAt: string }>;
}

interface PackageManifest {
  name: string;
  version: string;
  integrity: string;
  /** Path inside the package -> sha256 of its bytes. */
  files: Record<string, string>;
}

interface Packument {
  "dist-tags"?: Record<string, string>;
  versions?: Record<string, { dist?: { tarball?: string; integrity?: string; shasum?: string } }>;
}

export interface LibraryCacheOptions {
  /** The cache folder (the service: <data>/cache/npm). */
  root: string;
  /** npm's configuration; read from the environment and ~/.npmrc when not given. */
  config?: NpmConfig;
}

export class LibraryCache {
  readonly root: string;
  private readonly config: NpmConfig;
  /** In-flight work by key, so concurrent requests for one package fetch it once. */
  private readonly pending = new Map<string, Promise<unknown>>();
  /** Manifests read or written by this process, whose blobs were there. */
  private readonly manifests = new Map<string, PackageManifest>();
  /**
   * The last write of index.json: each pin reads the index after the one before it was written.
   * Two ranges resolved at once (typegpu's imports of tinyest and typed-binary) each read the
   * index and wrote it back with only their own pin, and the offline render then missed one.
   */
  private indexWrite: Promise<unknown> = Promise.resolve();

  constructor(options: LibraryCacheOptions) {
    this.root = options.root;
    this.config = options.config ?? npmConfig();
  }

  /** The file a CDN URL names, from the cache or the registry; a problem names what is missing. */
  async file(request: NpmFileRequest, signal?: AbortSignal): Promise<LibraryAnswer> {
    const requested = request.version ?? "latest";
    const version = await this.once(`resolve ${request.packageName}@${requested}`, () =>
      this.resolve(request.packageName, requested, signal),
    );
    if (!version.ok) return version;
    const manifest = await this.once(`package ${request.packageName}@${version.value}`, () =>
      this.manifest(request.packageName, version.value, signal),
    );
    if (!manifest.ok) return manifest;
    const path = await this.pathIn(manifest.value, request);
    const hash = path === undefined ? undefined : manifest.value.files[path];
    if (path === undefined || hash === undefined) {
      return problem(
        "not-in-package",
        `${request.packageName} ${version.value} on npm has no file ${request.path || "to use as its entry"}`,
        "Check the path in the URL against the package's files.",
      );
    }
    let body = await readFile(this.blobPath(hash));
    if (request.entry === "module" && /\.m?js$/.test(path)) {
      body = Buffer.from(
        withCdnImports(
          body.toString("utf8"),
          await this.packageJson(manifest.value),
          request.packageName,
          version.value,
          path,
        ),
      );
    }
    return {
      ok: true,
      file: {
        packageName: request.packageName,
        requested,
        version: version.value,
        integrity: manifest.value.integrity,
        path,
        body,
      },
    };
  }

  private async once<T>(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.pending.get(key) as Promise<T> | undefined;
    if (running) return running;
    const started = work().finally(() => this.pending.delete(key));
    this.pending.set(key, started);
    return started;
  }

  /** An exact version as it is; a tag or range by the index, else by the registry (then pinned). */
  private async resolve(
    name: string,
    requested: string,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: true; value: string } | { ok: false; problem: LibraryProblem }> {
    if (semverLib().valid(requested)) return { ok: true, value: requested };
    const index = await this.index();
    const pinned = index.specs[`${name}@${requested}`];
    if (pinned) return { ok: true, value: pinned.version };
    const packument = await this.packument(name, signal);
    if (!packument.ok) return packument;
    const versions = Object.keys(packument.value.versions ?? {});
    const version =
      packument.value["dist-tags"]?.[requested] ??
      (semverLib().validRange(requested) ? semverLib().maxSatisfying(versions, requested) : null);
    if (!version) return notOnNpm(name, requested);
    await this.pin(`${name}@${requested}`, version);
    return { ok: true, value: version };
  }

  /** The cached manifest of a version, fetching and unpacking its tarball the first time. */
  private async manifest(
    name: string,
    version: string,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: true; value: PackageManifest } | { ok: false; problem: LibraryProblem }> {
    const file = this.manifestPath(name, version);
    const known = this.manifests.get(file);
    if (known) return { ok: true, value: known };
    const cached = (await readJsonFile(file)) as PackageManifest | undefined;
    if (cached && Object.values(cached.files).every((hash) => existsSync(this.blobPath(hash)))) {
      this.manifests.set(file, cached);
      return { ok: true, value: cached };
    }
    const packument = await this.packument(name, signal);
    if (!packument.ok) return packument;
    const dist = packument.value.versions?.[version]?.dist;
    if (!dist?.tarball) return notOnNpm(name, version);
    const tarball = await this.fetchBytes(dist.tarball, MAX_TARBALL_BYTES, signal);
    if (!tarball.ok) return tarball;
    const integrity = checkIntegrity(tarball.value, dist.integrity, dist.shasum);
    if (!integrity) {
      return problem(
        "registry-unreachable",
        `${name} ${version} from the npm registry does not match its published checksum`,
        "Try again; if it persists, check the npm registry or proxy svc uses.",
      );
    }
    const files: Record<string, string> = {};
    for (const [path, body] of await unpack(tarball.value)) {
      const hash = createHash("sha256").update(body).digest("hex");
      const blob = this.blobPath(hash);
      if (!existsSync(blob)) await writeBlob(blob, body);
      files[path] = hash;
    }
    const manifest: PackageManifest = { name, version, integrity, files };
    await writeJsonFileAtomic(file, manifest);
    this.manifests.set(file, manifest);
    return { ok: true, value: manifest };
  }

  /** The path a request names: itself, or the package's entry for a bare package URL. */
  private async pathIn(
    manifest: PackageManifest,
    request: NpmFileRequest,
  ): Promise<string | undefined> {
    const exists = (path: string | undefined): path is string =>
      typeof path === "string" && manifest.files[normalise(path)] !== undefined;
    const fields = await this.packageJson(manifest);
    if (request.path) {
      // unpkg and jsdelivr answer a path without its extension with the .js file; esm.sh a
      // subpath the package exports (`typed-binary/foo`) with the file it maps to.
      const candidates = [request.path, `${request.path}.js`];
      const file = candidates.map(normalise).find(exists);
      if (file || request.entry !== "module") return file;
    }
    const exportsField = fields.exports as Record<string, unknown> | string | undefined;
    const exportsRoot =
      typeof exportsField === "object"
        ? (exportsField[request.path ? `./${request.path}` : "."] ??
          (request.path ? undefined : exportsField))
        : request.path
          ? undefined
          : exportsField;
    const fromExports = (condition: string): unknown =>
      exportsRoot && typeof exportsRoot === "object"
        ? (exportsRoot as Record<string, unknown>)[condition]
        : typeof exportsRoot === "string"
          ? exportsRoot
          : undefined;
    const candidates =
      request.entry === "module"
        ? [
            fromExports("browser"),
            fromExports("import"),
            fromExports("default"),
            fields.module,
            fields.main,
          ]
        : [fields.jsdelivr, fields.unpkg, stringOr(fields.browser), fields.main, "index.js"];
    for (const candidate of candidates) {
      if (typeof candidate !== "string") continue;
      const path = [candidate, `${candidate}.js`].map(normalise).find(exists);
      if (path) return path;
    }
    return undefined;
  }

  private async packageJson(manifest: PackageManifest): Promise<Record<string, unknown>> {
    const hash = manifest.files["package.json"];
    if (!hash) return {};
    try {
      return JSON.parse(await readFile(this.blobPath(hash), "utf8")) as Record<string, unknown>;
    } catch {
      return {};
    }
  }

  private async packument(
    name: string,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: true; value: Packument } | { ok: false; problem: LibraryProblem }> {
    const url = `${this.config.registry.replace(/\/+$/, "")}/${name.replace("/", "%2f")}`;
    const bytes = await this.fetchBytes(url, MAX_TARBALL_BYTES, signal, {
      accept: "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8",
    });
    if (!bytes.ok) {
      return bytes.problem.code === "not-on-npm" ? notOnNpm(name, undefined) : bytes;
    }
    return { ok: true, value: JSON.parse(bytes.value.toString("utf8")) as Packument };
  }

  private async fetchBytes(
    url: string,
    limit: number,
    signal: AbortSignal | undefined,
    headers: Record<string, string> = {},
  ): Promise<{ ok: true; value: Buffer } | { ok: false; problem: LibraryProblem }> {
    const timeout = AbortSignal.timeout(REGISTRY_TIMEOUT_MS);
    try {
      const response = await registryFetch(this.config, url, {
        headers,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (response.status === 404) {
        await response.body?.cancel();
        return problem("not-on-npm", `${url} is not on the npm registry`, "");
      }
      if (!response.ok) {
        await response.body?.cancel();
        return unreachable(this.config.registry, `answered ${response.status}`);
      }
      const declared = Number(response.headers.get("content-length") ?? 0);
      if (declared > limit) {
        await response.body?.cancel();
        return unreachable(this.config.registry, `${url} is larger than ${limit} bytes`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body ?? []) {
        size += (chunk as Uint8Array).byteLength;
        if (size > limit)
          return unreachable(this.config.registry, `${url} is larger than ${limit} bytes`);
        chunks.push(Buffer.from(chunk as Uint8Array));
      }
      return { ok: true, value: Buffer.concat(chunks) };
    } catch (error) {
      if (signal?.aborted) throw error;
      return unreachable(
        this.config.registry,
        error instanceof Error ? causeOf(error) : String(error),
      );
    }
  }

  /** Records what a tag or range resolved to, one write of index.json at a time. */
  private pin(spec: string, version: string): Promise<void> {
    const write = this.indexWrite.then(async () => {
      const latest = await this.index();
      latest.specs[spec] = { version, resolvedAt: new Date().toISOString() };
      await writeJsonFileAtomic(this.indexPath(), latest);
    });
    // A failed write fails its own pin, not the ones queued after it.
    this.indexWrite = write.catch(() => undefined);
    return write;
  }

  private async index(): Promise<IndexFile> {
    const index = (await readJsonFile(this.indexPath())) as IndexFile | undefined;
    return index && typeof index.specs === "object" ? index : { specs: {} };
  }

  private indexPath(): string {
    return join(this.root, "index.json");
  }

  private manifestPath(name: string, version: string): string {
    return join(this.root, "packages", `${name.replace("/", "+")}@${version}.json`);
  }

  private blobPath(hash: string): string {
    return join(this.root, "blobs", hash.slice(0, 2), hash);
  }
}

/** Where local renders and previews keep the cache: $XDG_CACHE_HOME/svc/npm or ~/.cache/svc/npm. */
export function defaultLibraryCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "svc", "npm");
}

let shared: LibraryCache | undefined;

/** The cache every CDN answer in this process uses (configureLibraryCache sets another). */
export function libraryCache(): LibraryCache {
  shared ??= new LibraryCache({
    root: process.env.SVC_LIBRARY_CACHE || defaultLibraryCacheRoot(),
  });
  return shared;
}

/** The service keeps its cache under its data folder; tests point it at a temp dir. */
export function configureLibraryCache(options: LibraryCacheOptions): LibraryCache {
  shared = new LibraryCache(options);
  return shared;
}

/** Every file of a package tarball (its `package/` prefix removed), within the size limit. */
async function unpack(tarball: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  let total = 0;
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      if (entry.header.type !== "file") continue;
      const path = normalise(entry.header.name.replace(/^[^/]+\//, ""));
      if (!path || path.split("/").includes("..")) continue;
      const body = Buffer.concat(chunks);
      total += body.length;
      if (total > MAX_UNPACKED_BYTES) throw new Error("the package unpacks to more than 256 MB");
      files.set(path, body);
    }
  })();
  reader.end(gunzipSync(tarball, { maxOutputLength: MAX_UNPACKED_BYTES + 1024 * 1024 }));
  await done;
  return files;
}

/** The integrity string when the bytes match the registry's sha512 (or older sha1), else undefined. */
function checkIntegrity(body: Buffer, integrity: string | undefined, shasum: string | undefined) {
  const sha512 = integrity
    ?.split(/\s+/)
    .find((entry) => entry.startsWith("sha512-"))
    ?.slice("sha512-".length);
  if (sha512) {
    const actual = createHash("sha512").update(body).digest("base64");
    return actual === sha512 ? `sha512-${sha512}` : undefined;
  }
  if (shasum) {
    const actual = createHash("sha1").update(body).digest("hex");
    return actual === shasum ? `sha1-${Buffer.from(shasum, "hex").toString("base64")}` : undefined;
  }
  return undefined;
}

/**
 * An ES module file with its bare imports (`from "tinyest"`) pointed at the same CDN, at the
 * range the package depends on, as esm.sh and Skypack serve them (svc answers those URLs too),
 * its relative imports made absolute (a bare package URL serves a file from another folder), and
 * `process.env` read as esm.sh builds it for browsers (NODE_ENV "production").
 */
function withCdnImports(
  text: string,
  packageJson: Record<string, unknown>,
  packageName: string,
  version: string,
  path: string,
): string {
  const fileUrl = `https://esm.sh/${packageName}@${version}/${path}`;
  const ranges: Record<string, string> = {
    ...(packageJson.peerDependencies as Record<string, string> | undefined),
    ...(packageJson.dependencies as Record<string, string> | undefined),
    [packageName]: version,
  };
  const host = "https://esm.sh";
  // As esm.sh builds for browsers: no Node `process`, NODE_ENV "production".
  const browserText = text
    .replace(/\bprocess\.env\.NODE_ENV\b/g, '"production"')
    .replace(/\bprocess\.env\b/g, '({ NODE_ENV: "production" })');
  return browserText.replace(
    /((?:\bfrom|\bimport)\s*\(?\s*)(["'])((?:@[\w.-]+\/)?[\w.-]+(?:\/[\w./@-]*)?|\.\.?\/[^"']*)\2/g,
    (whole, before: string, quote: string, specifier: string) => {
      if (specifier.startsWith(".")) {
        return `${before}${quote}${new URL(specifier, fileUrl).href}${quote}`;
      }
      const parts = specifier.split("/");
      const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
      const rest = specifier.slice(name.length);
      const range = ranges[name];
      const at = range && semverLib().validRange(range) ? `@${encodeURIComponent(range)}` : "";
      return `${before}${quote}${host}/${name}${at}${rest}${quote}`;
    },
  );
}

/** A blob written whole or not at all (temp file in the same folder, then rename). */
async function writeBlob(file: string, body: Buffer): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temp, body);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

function normalise(path: string): string {
  return path.replace(/^\.?\/+/, "");
}

function stringOr(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function problem(
  code: LibraryProblemCode,
  message: string,
  hint: string,
): { ok: false; problem: LibraryProblem } {
  return { ok: false, problem: { code, message, hint } };
}

function notOnNpm(name: string, version: string | undefined) {
  return problem(
    "not-on-npm",
    version ? `${name} ${version} is not on npm` : `${name} is not on npm`,
    "Load a version published on npm, or put the file in the project and load it from there.",
  );
}

function unreachable(registry: string, why: string) {
  return problem(
    "registry-unreachable",
    `the npm registry (${registry}) could not be reached: ${why}`,
    "Check the network, or npm's registry and proxy settings (npm config get registry).",
  );
}

function causeOf(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}
