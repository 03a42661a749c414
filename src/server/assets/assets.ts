// Assets: create -> signed PUT -> complete. Complete verifies the declared size and SHA-256, runs
// the hostile-archive checks, and files the zip content-addressed per account
// (`assets/<user>/<sha256>.zip`): an upload identical to an earlier asset of the same account
// answers with that asset (`deduplicated: true`) and its bytes are dropped.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import {
  ASSET_ID_PREFIX,
  type AssetComposition,
  type AssetRecord,
  type CompleteAssetResponse,
  type CreateAssetRequest,
  type CreateAssetResponse,
} from "../../shared/api";
import { UPLOAD_LIMIT_BYTES } from "../../shared/limits";
import type { Principal } from "../auth/accounts";
import type { ServiceContext } from "../context";
import type { AssetsTable } from "../db/schema";
import { ApiError } from "../errors";
import { newId, randomToken } from "../ids";
import { createIdempotently } from "../http/idempotency";
import { routeOf } from "../http/operations";
import { principalOf } from "../http/request";
import type { ZodTypeProvider } from "../http/schema-compilers";
import {
  findAccountAsset,
  findOriginalOf,
  insertAsset,
  markReady,
  setChecksum,
} from "./asset-repository";
import { checkCompositionPath, scanStoredComposition } from "./project";
import { ArchiveError, inspectZip } from "./zip-inspect";

export const ASSET_ENDPOINT = "POST /v3/assets";

export function registerAssetRoutes(instance: FastifyInstance, ctx: ServiceContext): void {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  for (const operation of ["createAsset", "createDirectUpload"] as const) {
    app.route({
      ...routeOf(operation),
      handler: (request, reply) =>
        createIdempotently(ctx.db, request, reply, ASSET_ENDPOINT, (principal) =>
          createAsset(ctx, principal, request.body),
        ),
    });
  }

  app.route({
    ...routeOf("completeAsset"),
    handler: async (request) => ({
      data: await completeAsset(ctx, principalOf(request), request.params.id),
    }),
  });

  app.route({
    ...routeOf("getAsset"),
    handler: async (request) => {
      const asset = await findAsset(ctx, principalOf(request).user.id, request.params.id);
      return { data: toAssetRecord(asset) };
    },
  });

  // svc extension: what a composition in the asset declares (for "render again" forms).
  app.route({
    ...routeOf("getAssetComposition"),
    handler: async (request): Promise<{ data: AssetComposition }> => {
      const asset = await findAsset(ctx, principalOf(request).user.id, request.params.id);
      if (asset.status !== "ready" || !asset.storage_key) {
        throw new ApiError(
          "svc_upload_not_found",
          `asset ${asset.id} is not complete yet; finish its upload first`,
          "asset_id",
        );
      }
      const composition = checkCompositionPath(request.query.composition);
      const scan = await scanStoredComposition(ctx, asset.storage_key, composition);
      return {
        data: {
          asset_id: asset.id,
          composition,
          width: scan.width,
          height: scan.height,
          duration: scan.duration ?? null,
          variables_json: scan.variablesJson,
        },
      };
    },
  });
}

export async function createAsset(
  ctx: ServiceContext,
  principal: Principal,
  input: CreateAssetRequest,
): Promise<CreateAssetResponse> {
  if (input.size_bytes > UPLOAD_LIMIT_BYTES) {
    throw new ApiError(
      "svc_project_too_large",
      `the archive is ${input.size_bytes} bytes; the limit is ${UPLOAD_LIMIT_BYTES} bytes (200 MiB)`,
      "size_bytes",
    );
  }
  const asset = newAssetRow(ctx, principal, {
    filename: input.filename,
    sizeBytes: input.size_bytes,
    // "" until the upload completes when the client sent none (the digest is computed then).
    checksum: input.checksum_sha256?.toLowerCase() ?? "",
  });
  const { id, upload_key: uploadKey } = asset;
  await insertAsset(ctx.db, asset);
  const expiresInSeconds = ctx.config.uploadUrlTtlSeconds;
  const upload = await ctx.store.signPut(uploadKey, {
    sizeBytes: input.size_bytes,
    sha256: input.checksum_sha256?.toLowerCase(),
    expiresInSeconds,
  });
  return {
    asset_id: id,
    upload_url: upload.url,
    upload_headers: { "content-type": "application/zip", ...upload.headers },
    expires_in_seconds: expiresInSeconds,
    max_bytes: input.size_bytes,
    status: "pending_upload",
  };
}

/** The row of a new asset waiting for its upload, with a fresh id and upload key. */
function newAssetRow(
  ctx: ServiceContext,
  principal: Principal,
  file: { filename: string; sizeBytes: number; checksum: string },
): AssetsTable {
  const id = newId(ASSET_ID_PREFIX);
  return {
    id,
    user_id: principal.user.id,
    filename: file.filename,
    size_bytes: file.sizeBytes,
    checksum_sha256: file.checksum,
    status: "pending_upload",
    upload_key: `uploads/${id}.zip`,
    storage_key: null,
    duplicate_of: null,
    created_ms: ctx.now(),
    completed_ms: null,
  };
}

export async function findAsset(
  ctx: ServiceContext,
  userId: string,
  assetId: string,
): Promise<AssetsTable> {
  const asset = await findAccountAsset(ctx.db, userId, assetId);
  if (!asset) throw new ApiError("svc_asset_not_found", `no asset ${assetId}`, "asset_id");
  return asset;
}

const completing = new Map<string, Promise<CompleteAssetResponse>>();

/** Idempotent: completing a ready asset answers the same; concurrent completes share one run. */
export function completeAsset(
  ctx: ServiceContext,
  principal: Principal,
  assetId: string,
): Promise<CompleteAssetResponse> {
  const running = completing.get(assetId);
  if (running) return running;
  const run = completeOnce(ctx, principal, assetId).finally(() => completing.delete(assetId));
  completing.set(assetId, run);
  return run;
}

async function completeOnce(
  ctx: ServiceContext,
  principal: Principal,
  assetId: string,
): Promise<CompleteAssetResponse> {
  const asset = await findAsset(ctx, principal.user.id, assetId);
  if (asset.status === "ready") return completedResponse(ctx, asset);
  const uploaded = await ctx.store.stat(asset.upload_key);
  if (!uploaded) {
    throw new ApiError(
      "svc_upload_not_found",
      `no bytes were uploaded for ${assetId} yet; PUT the zip to upload_url first`,
    );
  }
  const refuse = async (error: ApiError): Promise<never> => {
    await ctx.store.delete(asset.upload_key);
    throw error;
  };
  if (uploaded.size !== asset.size_bytes) {
    await refuse(
      new ApiError(
        "svc_size_mismatch",
        `uploaded ${uploaded.size} bytes but size_bytes was ${asset.size_bytes}`,
        "size_bytes",
      ),
    );
  }
  const local = await ctx.store.toLocalFile(asset.upload_key);
  try {
    const checksum = await sha256File(local.path);
    if (asset.checksum_sha256 === "") {
      asset.checksum_sha256 = checksum;
      await setChecksum(ctx.db, asset.id, checksum);
    } else if (checksum !== asset.checksum_sha256) {
      await refuse(
        new ApiError(
          "svc_checksum_mismatch",
          `the uploaded bytes have SHA-256 ${checksum}, not ${asset.checksum_sha256}`,
          "checksum_sha256",
        ),
      );
    }
    await inspectZip(local.path).catch((error: unknown) =>
      error instanceof ArchiveError
        ? refuse(new ApiError(error.code, error.message))
        : Promise.reject(error),
    );
  } finally {
    await local.release();
  }
  return fileReadyAsset(ctx, asset);
}

/** Files a verified upload under its content address, or points it at an identical asset. */
async function fileReadyAsset(
  ctx: ServiceContext,
  asset: AssetsTable,
): Promise<CompleteAssetResponse> {
  const original = await findOriginalOf(ctx.db, asset);
  const now = ctx.now();
  if (original?.storage_key && (await ctx.store.stat(original.storage_key))) {
    await ctx.store.delete(asset.upload_key);
    const updated = {
      ...asset,
      status: "ready" as const,
      storage_key: original.storage_key,
      duplicate_of: original.id,
      completed_ms: now,
    };
    await markReady(ctx.db, asset.id, {
      storageKey: original.storage_key,
      duplicateOf: original.id,
      now,
    });
    return completedResponse(ctx, updated);
  }
  const storageKey = `assets/${asset.user_id}/${asset.checksum_sha256}.zip`;
  await ctx.store.move(asset.upload_key, storageKey);
  await markReady(ctx.db, asset.id, { storageKey, now });
  return completedResponse(ctx, { ...asset, status: "ready", storage_key: storageKey });
}

/**
 * Stores project bytes the service obtained itself (a `url` project) as a ready asset of the
 * account, with the same checks as an upload. Returns the asset to render from.
 */
export async function createAssetFromBytes(
  ctx: ServiceContext,
  principal: Principal,
  filename: string,
  bytes: Buffer,
): Promise<AssetsTable> {
  const checksum = createHash("sha256").update(bytes).digest("hex");
  const asset = newAssetRow(ctx, principal, { filename, sizeBytes: bytes.length, checksum });
  const { id, upload_key: uploadKey } = asset;
  const scratch = join(ctx.config.dataDir, "tmp");
  await mkdir(scratch, { recursive: true });
  const file = join(scratch, `${id}-${randomToken(6)}.zip`);
  await writeFile(file, bytes);
  try {
    await inspectZip(file).catch((error: unknown) =>
      Promise.reject(
        error instanceof ArchiveError
          ? new ApiError(error.code, error.message, "project.url")
          : error,
      ),
    );
  } finally {
    await rm(file, { force: true });
  }
  await insertAsset(ctx.db, asset);
  await ctx.store.put(uploadKey, bytes);
  await fileReadyAsset(ctx, asset);
  return findAsset(ctx, principal.user.id, id);
}

async function completedResponse(
  ctx: ServiceContext,
  asset: AssetsTable,
): Promise<CompleteAssetResponse> {
  return {
    asset_id: asset.duplicate_of ?? asset.id,
    size_bytes: asset.size_bytes,
    status: "ready",
    deduplicated: asset.duplicate_of !== null,
    mime_type: "application/zip",
    url: await ctx.store.signGet(asset.storage_key!, {
      expiresInSeconds: ctx.config.downloadUrlTtlSeconds,
    }),
  };
}

export function toAssetRecord(asset: AssetsTable): AssetRecord {
  return {
    asset_id: asset.id,
    filename: asset.filename,
    content_type: "application/zip",
    size_bytes: asset.size_bytes,
    checksum_sha256: asset.checksum_sha256,
    status: asset.status,
    duplicate_of: asset.duplicate_of,
    created_at: Math.floor(asset.created_ms / 1000),
    completed_at: asset.completed_ms === null ? null : Math.floor(asset.completed_ms / 1000),
  };
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("end", () => resolve(hash.digest("hex")))
      .on("error", reject);
  });
}
