// The embedded object store: files under the data dir, with HMAC-signed URLs that this service
// serves itself (local-routes.ts). Writes go to a temp file renamed into place, so a reader never
// sees half an object.
import { createHmac } from "node:crypto";
import { constants, createReadStream, createWriteStream } from "node:fs";
import { access, mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { Readable } from "node:stream";
import {
  isValidObjectKey,
  SizeLimit,
  tooLarge,
  type ObjectStore,
  type SignedPut,
  type SignPutOptions,
} from "./object-store";
import { pipeline } from "node:stream/promises";
import { sameSecret } from "../../node/index";
import { randomToken } from "../ids";

export type SignatureCheck = "ok" | "expired" | "invalid";

export interface LocalObjectStoreOptions {
  root: string;
  signingSecret: string;
  /** Base URL of this service as clients reach it (known only after listen for port 0). */
  baseUrl: () => string;
  now?: () => number;
}

export class LocalObjectStore implements ObjectStore {
  private readonly root: string;
  private readonly now: () => number;

  constructor(private readonly options: LocalObjectStoreOptions) {
    this.root = resolve(options.root);
    this.now = options.now ?? Date.now;
  }

  private pathOf(key: string): string {
    if (!isValidObjectKey(key)) throw new Error(`invalid object key ${JSON.stringify(key)}`);
    const file = resolve(this.root, key);
    if (!file.startsWith(this.root + sep)) throw new Error(`object key escapes the store`);
    return file;
  }

  async put(
    key: string,
    body: Readable | Buffer,
    options: { maxBytes?: number } = {},
  ): Promise<{ size: number }> {
    const file = this.pathOf(key);
    await mkdir(dirname(file), { recursive: true });
    const temp = `${file}.${randomToken(8)}.partial`;
    let size = 0;
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    try {
      if (Buffer.isBuffer(body)) {
        if (body.length > maxBytes) throw tooLarge(maxBytes);
        size = body.length;
        await pipeline(async function* () {
          yield body;
        }, createWriteStream(temp));
      } else {
        const counter = new SizeLimit(maxBytes);
        await pipeline(body, counter, createWriteStream(temp));
        size = counter.bytes;
      }
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return { size };
  }

  async get(key: string, range?: { start: number; end: number }) {
    const info = await this.stat(key);
    if (!info) return undefined;
    const stream = createReadStream(
      this.pathOf(key),
      range ? { start: range.start, end: range.end } : {},
    );
    return { stream, size: info.size };
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      const info = await stat(this.pathOf(key));
      return info.isFile() ? { size: info.size } : undefined;
    } catch {
      return undefined;
    }
  }

  async toLocalFile(key: string) {
    return { path: this.pathOf(key), release: async () => {} };
  }

  async move(fromKey: string, toKey: string): Promise<void> {
    const to = this.pathOf(toKey);
    await mkdir(dirname(to), { recursive: true });
    await rename(this.pathOf(fromKey), to);
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  // The declared SHA-256 is not bound here: complete recomputes it from the stored bytes.
  async signPut(key: string, options: SignPutOptions): Promise<SignedPut> {
    return { url: this.sign("put", key, options.expiresInSeconds, options.sizeBytes), headers: {} };
  }

  async signGet(key: string, options: { expiresInSeconds: number }): Promise<string> {
    return this.sign("get", key, options.expiresInSeconds, 0);
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root, constants.W_OK);
  }

  private sign(op: "put" | "get", key: string, expiresInSeconds: number, maxBytes: number): string {
    this.pathOf(key);
    const exp = Math.floor(this.now() / 1000) + expiresInSeconds;
    const params = new URLSearchParams({ exp: String(exp) });
    if (op === "put") params.set("size", String(maxBytes));
    params.set("sig", signature(this.options.signingSecret, op, key, exp, maxBytes));
    return `${this.options.baseUrl()}/storage/${key}?${params.toString()}`;
  }

  /** Checks a signed URL's query for an operation on a key. */
  verify(
    op: "put" | "get",
    key: string,
    query: { exp?: string; size?: string; sig?: string },
  ): { check: SignatureCheck; maxBytes: number } {
    const exp = Number(query.exp);
    const maxBytes = op === "put" ? Number(query.size) : 0;
    if (
      !isValidObjectKey(key) ||
      !Number.isInteger(exp) ||
      !Number.isInteger(maxBytes) ||
      !query.sig
    ) {
      return { check: "invalid", maxBytes };
    }
    if (!sameSecret(signature(this.options.signingSecret, op, key, exp, maxBytes), query.sig)) {
      return { check: "invalid", maxBytes };
    }
    if (Math.floor(this.now() / 1000) > exp) return { check: "expired", maxBytes };
    return { check: "ok", maxBytes };
  }
}

function signature(secret: string, op: string, key: string, exp: number, maxBytes: number): string {
  return createHmac("sha256", secret)
    .update(`${op}\n${key}\n${exp}\n${maxBytes}`)
    .digest("base64url");
}

export function storageRoot(dataDir: string): string {
  return join(dataDir, "objects");
}
