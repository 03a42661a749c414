// What every part of the running service shares: configuration, database, object store, logger,
// clock and metrics. Built once in server.ts; tests of single modules can build their own.
import type { FastifyBaseLogger } from "fastify";
import type { ServerConfig } from "./config";
import type { Database } from "./db/database";
import type { ServiceMetrics } from "./metrics";
import type { ObjectStore } from "./storage/object-store";

export interface ServiceContext {
  config: ServerConfig;
  db: Database;
  store: ObjectStore;
  log: FastifyBaseLogger;
  now: () => number;
  metrics: ServiceMetrics;
}
