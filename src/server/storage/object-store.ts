// The object storage seam (`ObjectStore`): uploaded project zips, rendered videos, thumbnails.
// Clients never reach storage with their API key: they get signed URLs that name the operation,
// the key, an expiry and (for uploads) the size. Two implementations: files under the data dir
// with HMAC-signed URLs served by this service (local-store.ts, the embedded default), and an
// S3-compatible bucket with presigned URLs (s3-store.ts).
import { Transform, type Readable, type TransformCallback } from "node:stream";

export interface ObjectStore {
  /** Stores a body; with maxBytes, a longer body is refused with ObjectTooLargeError. */
  put(
    key: string,
    body: Readable | Buffer,
    options?: { maxBytes?: number },
  ): Promise<{ size: number }>;
  /** Reads an object, optionally a byte range (inclusive end). Undefined when absent. */
  get(
    key: string,
    range?: { start: number; end: number },
  ): Promise<{ stream: Readable; size: number } | undefined>;
  stat(key: string): Promise<{ size: number } | undefined>;
  /** A local file with the object's bytes (the object itself on disk, a download for S3). */
  toLocalFile(key: string): Promise<{ path: string; release: () => Promise<void> }>;
  move(fromKey: string, toKey: string): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * A URL a client PUTs one object's bytes to, without credentials. `sizeBytes` is the declared
   * size (the local store refuses a longer body; S3 signs it as the exact Content-Length) and
   * `sha256` (hex), when the client declared it, is bound too where the store can (S3 signs it as
   * `x-amz-checksum-sha256`). `headers` are those the PUT must carry for the signature to hold.
   */
  signPut(key: string, options: SignPutOptions): Promise<SignedPut>;
  signGet(key: string, options: { expiresInSeconds: number }): Promise<string>;
  /** Throws when the store cannot be used (readiness probe). */
  check(): Promise<void>;
}

export interface SignPutOptions {
  sizeBytes: number;
  sha256?: string | undefined;
  expiresInSeconds: number;
}

export interface SignedPut {
  url: string;
  headers: Record<string, string>;
}

export class ObjectTooLargeError extends Error {
  override readonly name = "ObjectTooLargeError";
}

/** Passes a streamed body through, counting it; fails with ObjectTooLargeError past maxBytes. */
export class SizeLimit extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) callback(tooLarge(this.maxBytes));
    else callback(null, chunk);
  }
}

/** The refusal of a body longer than maxBytes. */
export function tooLarge(maxBytes: number): ObjectTooLargeError {
  return new ObjectTooLargeError(`body is larger than ${maxBytes} bytes`);
}

const CONTENT_TYPES: Record<string, string> = {
  mp4: "video/mp4",
  webm: "video/webm",
  mov: "video/quicktime",
  gif: "image/gif",
  jpg: "image/jpeg",
  zip: "application/zip",
};

/** The media type an object is served with, from its key's extension. */
export function contentTypeOf(key: string): string {
  return CONTENT_TYPES[key.split(".").pop() ?? ""] ?? "application/octet-stream";
}

const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9_.\-/]*$/;

export function isValidObjectKey(key: string): boolean {
  return (
    KEY_PATTERN.test(key) &&
    !key.split("/").some((part) => part === ".." || part === "." || part === "")
  );
}
