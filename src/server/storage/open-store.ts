// Picks the object store from the configuration: files under the data dir (the embedded default)
// or, when SVC_STORAGE_URL=s3://bucket/prefix is set, an S3-compatible bucket. A bucket that
// cannot be used stops the start with a message naming the variable to fix, rather than failing
// the first upload.
import { join } from "node:path";
import type { ServerConfig } from "../config";
import { LocalObjectStore, storageRoot } from "./local-store";
import type { ObjectStore } from "./object-store";
import {
  describeStoreFailure,
  MAX_PRESIGN_SECONDS,
  S3ObjectStore,
  s3StoreOptionsFromEnv,
} from "./s3-store";

export async function openObjectStore(
  config: ServerConfig,
  local: { signingSecret: string; baseUrl: () => string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<ObjectStore> {
  if (!env.SVC_STORAGE_URL?.trim()) {
    return new LocalObjectStore({ root: storageRoot(config.dataDir), ...local });
  }
  const options = s3StoreOptionsFromEnv(env, join(config.dataDir, "tmp"));
  for (const [name, seconds] of [
    ["SVC_SERVER_DOWNLOAD_URL_TTL_SECONDS", config.downloadUrlTtlSeconds],
    ["SVC_SERVER_UPLOAD_URL_TTL_SECONDS", config.uploadUrlTtlSeconds],
  ] as const) {
    if (seconds > MAX_PRESIGN_SECONDS)
      throw new Error(`${name} must be at most ${MAX_PRESIGN_SECONDS} (7 days) with S3 storage`);
  }
  const store = new S3ObjectStore(options);
  try {
    await store.check();
  } catch (error) {
    store.close();
    throw new Error(describeStoreFailure(error, options));
  }
  return store;
}
