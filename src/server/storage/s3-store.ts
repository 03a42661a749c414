// S3-compatible object storage (AWS S3 or any server that speaks its API), selected by
// `SVC_STORAGE_URL=s3://bucket/prefix` plus the standard AWS variables. Clients upload and
// download with presigned URLs that the object store checks, so their bytes never pass through the
// API: an upload URL signs the exact Content-Length and, when the client declared a SHA-256,
// `x-amz-checksum-sha256` (kept a header, not hoisted into the query, so the PUT must carry it; AWS
// S3 also verifies the body against it, other servers may not — see src/server/README.md).
// The SDK's default request checksums are off (WHEN_REQUIRED): they would sign a CRC32 of an empty
// body into presigned URLs, and send streamed bodies aws-chunked, which S3-compatible servers
// often refuse. Bodies of unknown length go up as multipart uploads (@aws-sdk/lib-storage).
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { PassThrough, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { randomToken } from "../ids";
import {
  contentTypeOf,
  isValidObjectKey,
  SizeLimit,
  tooLarge,
  type ObjectStore,
  type SignedPut,
  type SignPutOptions,
} from "./object-store";

export interface S3StoreOptions {
  bucket: string;
  /** Prepended to every key with a slash; "" for none. */
  prefix: string;
  region: string;
  /** An S3-compatible server's URL; path-style addressing (`endpoint/bucket/key`) when set. */
  endpoint?: string | undefined;
  /** Without them, the SDK's default chain (profile, instance or task role) is used. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  /** Where toLocalFile downloads objects (the data dir's tmp). */
  scratchDir: string;
  now?: () => number;
}

/** SigV4 presigned URLs live at most 7 days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
const PART_BYTES = 16 * 1024 * 1024;

export class S3ObjectStore implements ObjectStore {
  readonly client: S3Client;
  private readonly now: () => number;

  constructor(private readonly options: S3StoreOptions) {
    this.now = options.now ?? Date.now;
    // svc supports Node 20; the SDK's multi-line notice that its future versions will not would
    // land in every service log and CLI run and tell our users nothing they can act on.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  /** Where an object lives, for messages: `s3://bucket/prefix/key`. */
  locationOf(key = ""): string {
    return `s3://${this.options.bucket}/${this.objectKey(key, false)}`;
  }

  private objectKey(key: string, validate = true): string {
    if (validate && !isValidObjectKey(key))
      throw new Error(`invalid object key ${JSON.stringify(key)}`);
    return this.options.prefix ? `${this.options.prefix}/${key}` : key;
  }

  async put(
    key: string,
    body: Readable | Buffer,
    options: { maxBytes?: number } = {},
  ): Promise<{ size: number }> {
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    const Key = this.objectKey(key);
    if (Buffer.isBuffer(body)) {
      if (body.length > maxBytes) throw tooLarge(maxBytes);
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.options.bucket,
          Key,
          Body: body,
          ContentLength: body.length,
          ContentType: contentTypeOf(key),
        }),
      );
      return { size: body.length };
    }
    const counter = new SizeLimit(maxBytes);
    const counted = new PassThrough();
    // One part goes up as a plain PUT; a longer body becomes a multipart upload, aborted (its
    // parts deleted) when the body fails or runs past maxBytes.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.options.bucket, Key, Body: counted, ContentType: contentTypeOf(key) },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    });
    let failure: unknown;
    const fail = (error: unknown) => {
      failure ??= error;
      counted.destroy();
    };
    await Promise.all([pipeline(body, counter, counted).catch(fail), upload.done().catch(fail)]);
    if (counter.bytes > maxBytes) throw tooLarge(maxBytes);
    if (failure) throw failure;
    return { size: counter.bytes };
  }

  async get(key: string, range?: { start: number; end: number }) {
    try {
      const object = await this.client.send(
        new GetObjectCommand({
          Bucket: this.options.bucket,
          Key: this.objectKey(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      const total = /\/(\d+)$/.exec(object.ContentRange ?? "")?.[1];
      return {
        stream: object.Body as Readable,
        size: total === undefined ? (object.ContentLength ?? 0) : Number(total),
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }),
      );
      return { size: head.ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async toLocalFile(key: string): Promise<{ path: string; release: () => Promise<void> }> {
    const object = await this.get(key);
    if (!object) throw new Error(`${this.locationOf(key)} does not exist`);
    await mkdir(this.options.scratchDir, { recursive: true });
    const path = join(this.options.scratchDir, `s3-${randomToken(8)}-${basename(key)}`);
    const release = () => rm(path, { force: true });
    try {
      await pipeline(object.stream, createWriteStream(path, { mode: 0o600 }));
    } catch (error) {
      await release();
      throw error;
    }
    return { path, release };
  }

  /** Copy then delete (S3 has no rename). One CopyObject moves up to 5 GiB: uploads, not videos. */
  async move(fromKey: string, toKey: string): Promise<void> {
    await this.client.send(
      new CopyObjectCommand({
        Bucket: this.options.bucket,
        Key: this.objectKey(toKey),
        CopySource: `${this.options.bucket}/${this.objectKey(fromKey)}`,
      }),
    );
    await this.delete(fromKey);
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }),
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async signPut(key: string, options: SignPutOptions): Promise<SignedPut> {
    const checksum = options.sha256 ? Buffer.from(options.sha256, "hex").toString("base64") : "";
    const command = new PutObjectCommand({
      Bucket: this.options.bucket,
      Key: this.objectKey(key),
      ContentLength: options.sizeBytes,
      ...(checksum ? { ChecksumSHA256: checksum } : {}),
    });
    const url = await getSignedUrl(this.client, command, {
      expiresIn: options.expiresInSeconds,
      signingDate: new Date(this.now()),
      unhoistableHeaders: new Set(["x-amz-checksum-sha256"]),
    });
    const headers: Record<string, string> = { "content-length": String(options.sizeBytes) };
    if (checksum) headers["x-amz-checksum-sha256"] = checksum;
    return { url, headers };
  }

  async signGet(key: string, options: { expiresInSeconds: number }): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) });
    return getSignedUrl(this.client, command, {
      expiresIn: options.expiresInSeconds,
      signingDate: new Date(this.now()),
    });
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
  }

  close(): void {
    this.client.destroy();
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return statusOf(error) === 404 || name === "NoSuchKey" || name === "NotFound";
}

/**
 * Reads `SVC_STORAGE_URL=s3://bucket/prefix` and the AWS variables. Throws an Error whose message
 * names the variable to fix.
 */
export function s3StoreOptionsFromEnv(env: NodeJS.ProcessEnv, scratchDir: string): S3StoreOptions {
  const raw = (env.SVC_STORAGE_URL ?? "").trim();
  const shape = "SVC_STORAGE_URL must look like s3://bucket or s3://bucket/prefix";
  const match = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(raw);
  if (!match) throw new Error(`${shape} (it is ${JSON.stringify(raw)})`);
  const bucket = match[1]!;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new Error(
      `${shape}: ${JSON.stringify(bucket)} is not a bucket name (3-63 lowercase letters, digits, dots, hyphens)`,
    );
  }
  const prefix = (match[2] ?? "").replace(/^\/+|\/+$/g, "");
  if (prefix && !isValidObjectKey(prefix)) {
    throw new Error(
      `${shape}: the prefix ${JSON.stringify(prefix)} may hold only letters, digits, _ . - and /`,
    );
  }
  const endpoint = (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || "").trim() || undefined;
  if (endpoint && !/^https?:\/\/[^/?#]+\/?$/.test(endpoint)) {
    throw new Error(
      `AWS_ENDPOINT_URL must be the object store's base URL, like http://10.0.0.4:8080 (it is ${JSON.stringify(endpoint)})`,
    );
  }
  const region = (env.AWS_REGION || env.AWS_DEFAULT_REGION || "").trim() || undefined;
  if (!region && !endpoint) {
    throw new Error("set AWS_REGION to the bucket's region (e.g. eu-west-1) for SVC_STORAGE_URL");
  }
  const accessKeyId = (env.AWS_ACCESS_KEY_ID ?? "").trim();
  const secretAccessKey = (env.AWS_SECRET_ACCESS_KEY ?? "").trim();
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw new Error(
      `set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (only ${accessKeyId ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY"} is set)`,
    );
  }
  const sessionToken = (env.AWS_SESSION_TOKEN ?? "").trim();
  return {
    bucket,
    prefix,
    region: region ?? "us-east-1",
    endpoint: endpoint?.replace(/\/$/, ""),
    credentials: accessKeyId
      ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
      : undefined,
    scratchDir,
  };
}

/** Why the bucket cannot be used, in the words of the variables that configure it. */
export function describeStoreFailure(error: unknown, options: S3StoreOptions): string {
  const where = `s3://${options.bucket}${options.endpoint ? ` at ${options.endpoint}` : ""}`;
  const status = statusOf(error);
  const name = (error as { name?: string; code?: string } | null)?.name ?? "";
  const code = (error as { code?: string } | null)?.code ?? "";
  if (status === 403 || name === "InvalidAccessKeyId" || name === "SignatureDoesNotMatch")
    return `the object store refused the credentials for ${where}: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (${status ?? name})`;
  if (status === 404 || name === "NoSuchBucket" || name === "NotFound")
    return `the bucket in SVC_STORAGE_URL does not exist: ${where} answered 404; create it or fix SVC_STORAGE_URL`;
  if (status === 301 || status === 400)
    return `${where} answered ${status}: check AWS_REGION (${options.region}) and SVC_STORAGE_URL`;
  if (status === undefined)
    return `cannot reach the object store for ${where}: ${code || name || (error as Error).message}; check AWS_ENDPOINT_URL${options.endpoint ? "" : " (unset: AWS S3)"} and the network`;
  return `the object store for ${where} answered ${status} ${name}`;
}
