// Vitest global setup of the "s3" project (vitest.config.ts): one Swift S3 store for all of the
// project's test files, started before them and stopped after. Test files reach it through
// `inject("s3Server")`; startService uses it by itself when SVC_TEST_STORAGE=s3.
import type { TestProject } from "vitest/node";
import { startS3Server, type S3Coordinates } from "./s3-server";

declare module "vitest" {
  export interface ProvidedContext {
    s3Server: S3Coordinates;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startS3Server();
  const { endpoint, region, accessKeyId, secretAccessKey, bucket } = server;
  project.provide("s3Server", { endpoint, region, accessKeyId, secretAccessKey, bucket });
  return () => server.stop();
}
