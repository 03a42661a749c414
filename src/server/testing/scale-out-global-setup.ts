// Vitest global setup of the "scale-out" project (vitest.config.ts): one Swift S3 store and one
// PostgreSQL server for all of the project's test files, started before them and stopped after.
// Test files reach them through `inject`; startService uses them by itself (SVC_TEST_STORAGE=s3,
// SVC_TEST_DATABASE=postgres), each service in its own database and under its own prefix.
import type { TestProject } from "vitest/node";
import { startPostgres } from "./postgres";
import { startS3Server, type S3Coordinates } from "./s3-server";

declare module "vitest" {
  export interface ProvidedContext {
    s3Server: S3Coordinates;
    /** URL of the project's PostgreSQL server, without a database name. */
    postgresServer: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [store, postgres] = await Promise.all([startS3Server(), startPostgres()]);
  const { endpoint, region, accessKeyId, secretAccessKey, bucket } = store;
  project.provide("s3Server", { endpoint, region, accessKeyId, secretAccessKey, bucket });
  project.provide("postgresServer", postgres.url(""));
  return async () => {
    await Promise.all([store.stop(), postgres.stop()]);
  };
}
