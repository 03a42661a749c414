// Uploading a built archive: create the asset (with the run's Idempotency-Key, so a retried create
// never makes a second asset), PUT the zip to the signed URL with byte progress, then complete it.
// The PUT is retried from the start of the file on a dropped connection; complete is retried on
// 409 svc_upload_not_found (the bytes are not visible yet) and on transient failures.
import { createReadStream } from "node:fs";
import { HTTPError } from "got";
import { isTransient, toClientError, type ApiClient } from "./api-client";
import { clientRetryDelay, sleep, type Sleep } from "./backoff";
import { ClientError } from "./errors";

export interface UploadSource {
  path: string;
  sizeBytes: number;
  sha256: string;
}

export interface UploadOptions {
  idempotencyKey: string;
  filename?: string;
  signal?: AbortSignal | undefined;
  onProgress?: (bytesSent: number, totalBytes: number) => void;
  /** Attempts of the PUT and of complete (default 5 each). */
  attempts?: number;
  backoffMs?: number;
  sleep?: Sleep;
}

export interface UploadResult {
  /** The asset to render from (an earlier identical upload when the service deduplicated). */
  assetId: string;
  /** The asset this upload created. */
  createdAssetId: string;
  deduplicated: boolean;
}

export async function uploadArchive(
  client: ApiClient,
  source: UploadSource,
  options: UploadOptions,
): Promise<UploadResult> {
  const { signal } = options;
  const wait = options.sleep ?? sleep;
  const attempts = options.attempts ?? 5;
  const backoffMs = options.backoffMs ?? 1000;
  const created = await client.createAsset(
    {
      filename: options.filename ?? "project.zip",
      content_type: "application/zip",
      size_bytes: source.sizeBytes,
      checksum_sha256: source.sha256,
    },
    options.idempotencyKey,
    signal,
  );
  const asset = created.data;
  if (created.replayed) {
    // The same key was used before: that asset may already hold these bytes.
    const record = await client.getAsset(asset.asset_id, signal);
    if (record.status === "ready") {
      options.onProgress?.(source.sizeBytes, source.sizeBytes);
      const completed = await client.completeAsset(asset.asset_id, signal);
      return {
        assetId: completed.asset_id,
        createdAssetId: asset.asset_id,
        deduplicated: completed.deduplicated,
      };
    }
  }

  for (let attempt = 1; ; attempt++) {
    try {
      await putFile(client, asset.upload_url, asset.upload_headers, source, options);
      break;
    } catch (error) {
      const failure = toClientError(error, client.baseUrl, signal);
      if (attempt >= attempts || !isTransient(failure)) throw failure;
      await wait(clientRetryDelay(attempt, backoffMs), signal);
    }
  }

  for (let attempt = 1; ; attempt++) {
    try {
      const completed = await client.completeAsset(asset.asset_id, signal);
      return {
        assetId: completed.asset_id,
        createdAssetId: asset.asset_id,
        deduplicated: completed.deduplicated,
      };
    } catch (error) {
      const failure = toClientError(error, client.baseUrl, signal);
      const retryable = failure.code === "svc_upload_not_found" || isTransient(failure);
      if (attempt >= attempts || !retryable) throw failure;
      await wait(clientRetryDelay(attempt, backoffMs), signal);
    }
  }
}

async function putFile(
  client: ApiClient,
  url: string,
  headers: Record<string, string>,
  source: UploadSource,
  options: UploadOptions,
): Promise<void> {
  options.onProgress?.(0, source.sizeBytes);
  try {
    await client.transport
      .put(url, {
        body: createReadStream(source.path),
        headers: { ...headers, "content-length": String(source.sizeBytes) },
        // A stream body cannot be replayed by got; the caller retries from the start of the file.
        retry: { limit: 0 },
        timeout: { connect: 10_000, socket: 60_000 },
        ...(options.signal ? { signal: options.signal } : {}),
      })
      .on("uploadProgress", (progress) => {
        options.onProgress?.(Math.min(progress.transferred, source.sizeBytes), source.sizeBytes);
      });
  } catch (error) {
    if (error instanceof HTTPError && error.response.statusCode === 403) {
      throw new ClientError(
        "upload_url_rejected",
        "The signed upload URL was refused (it may have expired).",
        "Run the command again to get a fresh upload URL.",
        { status: 403 },
      );
    }
    throw error;
  }
}
