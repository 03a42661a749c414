// The polled answer as the poll lane sends it (issue 40): the JSON text of `GET
// /v3/svc/renders/{id}`, the same as the route's (renderAnswer, then the route's serialiser). On
// SQLite it is read on the reading connection (db/sqlite.ts SqliteReader) and kept, per user and
// render, for as long as no connection has committed anything since it was made (SQLite's
// `data_version`, a few µs) and at most KEEP_MS: a client polling a render that has not changed
// gets the text made for its last poll, without the row's read, the record or the serialiser.
// Any write anywhere (a worker's progress, a cancel, this process's own) makes the next poll read
// again. KEEP_MS bounds how much older the signed URLs of a kept answer are than a fresh one's.
// On PostgreSQL every poll is read afresh.
import type { ServiceContext } from "../context";
import type { RendersTable } from "../db/schema";
import { sqliteReaderOf, type SqliteReader } from "../db/sqlite";
import { toRenderRecord } from "./render-record";
import { renderAnswer, renderNotFound } from "./renders";
import { selectRender } from "./render-repository";

const KEEP_MS = 5_000;
/** Kept answers at most; past it they are dropped together (the next polls read again). */
const MAX_KEPT = 10_000;

interface Kept {
  version: number;
  madeAt: number;
  body: string;
}

export class PollAnswers {
  private readonly reader: SqliteReader | undefined;
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly ctx: ServiceContext,
    /** The route's serialiser of `{data: record}`. */
    private readonly serialise: (answer: unknown) => string,
  ) {
    this.reader = sqliteReaderOf(ctx.db);
  }

  /**
   * The answer's text: at once when it is kept, else a promise. Throws or rejects with
   * svc_render_not_found as the route does.
   */
  answer(userId: string, renderId: string): string | Promise<string> {
    const reader = this.reader;
    if (!reader) return this.fresh(userId, renderId);
    // Read before the row: a commit in between makes the kept answer newer than its version.
    const version = reader.dataVersion();
    const key = `${userId} ${renderId}`;
    const now = this.ctx.now();
    const kept = this.kept.get(key);
    if (kept && kept.version === version && now - kept.madeAt < KEEP_MS) return kept.body;
    const [row] = reader.all<RendersTable>(selectRender.sql(this.ctx.db), [renderId, userId]);
    if (!row) throw renderNotFound(renderId);
    return this.keep(key, { version, madeAt: now }, row);
  }

  private async fresh(userId: string, renderId: string): Promise<string> {
    return this.serialise(await renderAnswer(this.ctx, userId, renderId));
  }

  private async keep(key: string, made: Omit<Kept, "body">, row: RendersTable): Promise<string> {
    const body = this.serialise({ data: await toRenderRecord(this.ctx, row) });
    if (this.kept.size >= MAX_KEPT) this.kept.clear();
    this.kept.set(key, { ...made, body });
    return body;
  }
}
