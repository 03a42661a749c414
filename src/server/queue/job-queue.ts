// The render job queue seam (`JobQueue`). A worker claims a job with a lease, renews it by
// heartbeat, and finishes it in one transaction with the render's completion, only while it still
// holds the lease, so a worker presumed dead can never complete or charge a render twice. Two
// implementations: a table in the service's database (sql-queue.ts, the embedded default) and
// pg-boss on PostgreSQL (the scale-out shape).
import type { Transaction } from "kysely";
import type { Database } from "../db/database";
import type { DB } from "../db/schema";

export interface Lease {
  jobId: string;
  token: string;
  attempt: number;
  /** The queue engine's own id of the delivery (pg-boss), when there is one. */
  ref?: string;
}

/**
 * The work a job stands for: a whole render (one worker, today's embedded path), one chunk of a
 * distributed render, the join of its chunks, or one output of a render with several. Job ids
 * spell it, so both queues store a string. A chunk job with `copy` is the speculative second run
 * of a straggler chunk (render/speculation.ts): its own job, lease and attempts, racing the first
 * for the chunk.
 */
export type RenderJob =
  | { kind: "whole"; renderId: string }
  | { kind: "chunk"; renderId: string; chunk: number; copy?: boolean }
  | { kind: "join"; renderId: string }
  /** One output of a render submitted with `outputs` (render/job-output.ts). */
  | { kind: "output"; renderId: string; output: number };

export function jobIdOf(job: RenderJob): string {
  if (job.kind === "chunk") return `${job.renderId}:chunk:${job.chunk}${job.copy ? ":copy" : ""}`;
  if (job.kind === "join") return `${job.renderId}:join`;
  if (job.kind === "output") return `${job.renderId}:output:${job.output}`;
  return job.renderId;
}

export function parseJobId(jobId: string): RenderJob {
  const [renderId = "", kind, chunk, copy] = jobId.split(":");
  if (kind === "chunk") {
    return { kind, renderId, chunk: Number(chunk), ...(copy === "copy" ? { copy: true } : {}) };
  }
  if (kind === "join") return { kind, renderId };
  if (kind === "output") return { kind, renderId, output: Number(chunk) };
  return { kind: "whole", renderId };
}

export interface JobQueue {
  enqueue(trx: Transaction<DB> | Database, jobId: string): Promise<void>;
  /** Claims one job, or undefined when none is ready. */
  claim(owner: string): Promise<Lease | undefined>;
  /** Extends the lease; false when it was lost (expired and taken, or the job was removed). */
  heartbeat(lease: Lease): Promise<boolean>;
  /**
   * Runs `finish` in one transaction with marking the job done/failed, only if the lease is still
   * held. Returns false (and runs nothing) when it is not.
   */
  finish(
    lease: Lease,
    state: "done" | "failed",
    finish: (trx: Transaction<DB>) => Promise<void>,
  ): Promise<boolean>;
  /** Gives the job back without using up the attempt (graceful shutdown). */
  release(lease: Lease): Promise<void>;
  /**
   * Gives a job that failed back for another attempt, this one used up, as a lost lease would be
   * (pg-boss: after its retry delay). Only while the lease is held; the caller checks that
   * attempts remain (`lease.attempt < maxAttempts`), and fails the render itself otherwise.
   */
  retry(lease: Lease, reason: string): Promise<boolean>;
  /**
   * Jobs whose lease expired on their last attempt: marks them failed and returns their ids.
   * `onExhausted` runs for each in the transaction that marks it, so what the caller does about it
   * (fail the render) happens exactly when the job is marked, whatever dies in between.
   */
  collectExhausted(
    onExhausted?: (trx: Transaction<DB>, jobId: string) => Promise<void>,
  ): Promise<string[]>;
  /** Stops every job of a render (deleted, or failed in one of its chunks). */
  cancelRender(trx: Transaction<DB> | Database, renderId: string): Promise<void>;
  /** Lets go of connections and timers. */
  close(): Promise<void>;
}
