// The kinds of render job (queue/job-queue.ts RenderJob) as the worker sees them: what each one
// runs, how its log lines are labelled, and the traits the failure policy weighs
// (failure-policy.ts). The only place that tells the kinds apart, so the worker loop (worker.ts)
// knows no job semantics.
import type { Transaction } from "kysely";
import type { ServiceContext } from "../context";
import type { DB } from "../db/schema";
import type { RenderJob } from "../queue/job-queue";
import type { Attempt, JobResult, JobServices } from "./attempt";
import type { JobTraits } from "./failure-policy";
import { runChunkJob } from "./job-chunk";
import { runJoinJob } from "./job-join";
import { runOutputJob } from "./job-output";
import { runWholeJob } from "./job-whole";
import { chunkIsDone } from "./chunk-repository";

export interface JobKind {
  /** The queue's name for the kind (metrics label, the log's `job` field). */
  name: RenderJob["kind"];
  /** The word for it in log lines ("render started", "chunk finished"). */
  label: string;
  /** The kind's own fields on every log line of the job. */
  logFields: Record<string, unknown>;
  /** Claiming it starts the whole render (its progress starts again from 0). */
  wholeRender: boolean;
  /** The render_chunks row the cancel check also looks at (-1: none). */
  chunkIndex: number;
  /** A speculative chunk copy (counted on its own: speculation.ts). */
  speculativeCopy: boolean;
  /** A job that draws frames (the seconds-per-frame metric). */
  drawsFrames: boolean;
  traits: JobTraits;
  run(services: JobServices, attempt: Attempt): Promise<JobResult>;
  /** Counted when claimed. */
  countClaim(ctx: ServiceContext, attempt: number): void;
  /**
   * A job whose worker died on its last attempt fails its render, unless losing it lost nothing
   * (a spare copy, or a chunk its other copy finished).
   */
  lossIsHarmless(trx: Transaction<DB>): Promise<boolean>;
}

const PLAIN = { retryable: false, spare: false, requeuesRender: false };

export function jobKind(job: RenderJob): JobKind {
  const base = {
    name: job.kind,
    label: job.kind as string,
    logFields: {} as Record<string, unknown>,
    wholeRender: false,
    chunkIndex: -1,
    speculativeCopy: false,
    drawsFrames: true,
    traits: PLAIN,
    countClaim: () => undefined,
    lossIsHarmless: () => Promise.resolve(false),
  };
  switch (job.kind) {
    case "whole":
      return {
        ...base,
        label: "render",
        wholeRender: true,
        traits: { ...PLAIN, requeuesRender: true },
        run: runWholeJob,
      };
    case "chunk": {
      const copy = job.copy === true;
      return {
        ...base,
        logFields: { chunk: job.chunk, ...(copy ? { copy: true } : {}) },
        chunkIndex: job.chunk,
        speculativeCopy: copy,
        traits: { ...PLAIN, spare: copy },
        run: (services, attempt) => runChunkJob(services, attempt, job.chunk, copy),
        countClaim: (ctx, attempt) => {
          ctx.metrics.chunkAttempts.inc();
          if (attempt > 1) ctx.metrics.chunkRetries.inc();
        },
        lossIsHarmless: async (trx) => copy || (await chunkIsDone(trx, job.renderId, job.chunk)),
      };
    }
    case "output":
      return {
        ...base,
        logFields: { output: job.output },
        run: (services, attempt) => runOutputJob(services, attempt, job.output),
      };
    case "join":
      return {
        ...base,
        drawsFrames: false,
        traits: { ...PLAIN, retryable: true },
        run: runJoinJob,
      };
  }
}
