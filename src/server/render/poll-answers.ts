// The polled answer as the poll lane sends it (issue 40): the JSON text of `GET
// /v3/svc/renders/{id}`, the same as the route's (renderAnswer, then the route's serialiser). On
// SQLite it is read on the reading connection (db/sqlite.ts SqliteReader) and kept, per user and
// render, for as long as nothing has been committed since it was made (the reader's stamp: this
// process's own statements at once, another process's commits within 10 ms) and at most KEEP_MS:
// a client polling a render that has not changed gets the text made for its last poll, without
// the row's read, the record or the serialiser. Any write (a worker's progress, a cancel, the
// rate limit's count) makes the next poll read again. KEEP_MS bounds how much older the signed
// URLs of a kept answer are than a fresh one's. On PostgreSQL every poll is read afresh.
import type { ServiceContext } from "../context";
import type { RendersTable } from "../db/schema";
import { sameStamp, sqliteReaderOf, type ReaderStamp, type SqliteReader } from "../db/sqlite";
import { toRenderRecord } from "./render-record";
import { renderAnswer, renderNotFound } from "./renders";
import { selectRender } from "./render-repository";

const KEEP_MS = 5_000;
/** Kept answers at most; past it they are dropped together (the next polls read again). */
const MAX_KEPT = 10_000;

interface Kept {
  stamp: ReaderStamp;
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
    // Taken before the row is read: a commit in between makes the kept answer newer than its
    // stamp, never older.
    const stamp = reader.stamp();
    const key = `${userId} ${renderId}`;
    const now = this.ctx.now();
    const kept = this.kept.get(key);
    if (kept && sameStamp(kept.stamp, stamp) && now - kept.madeAt < KEEP_MS) return kept.body;
    const [row] = reader.all<RendersTable>(selectRender.sql(this.ctx.db), [renderId, userId]);
    if (!row) throw renderNotFound(renderId);
    return this.keep(key, { stamp, madeAt: now }, row);
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
