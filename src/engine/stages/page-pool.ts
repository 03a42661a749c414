// Warm pages: a render worker keeps the browser page of a finished chunk, loaded and ready, with
// its project server, so the next chunk of the same render on that worker starts without a
// browser start, page load or ready wait, and — chunks being handed out in order — usually at the
// very frame the page stopped at (no catch-up at all). A page is reused only for the same project
// folder, entry, variables and frame settings (its key); idle pages close after a while, and a
// page that saw an error or a cancel is never kept.
import type { ResolvedLibrary } from "../../node/index";
import type { CapturePage } from "../browser/capture";
import type { ProjectServer } from "../browser/project-server";
import { closeSpareBrowser } from "../browser/spare-browser";

/** Where a page sends what it reports; rebound to the render that adopts it. */
export interface PageHooks {
  pageError(message: string): void;
  blocked(url: string, reason?: string): void;
  library(url: string, library: ResolvedLibrary): void;
}

export interface WarmPage {
  key: string;
  server: ProjectServer;
  session: CapturePage;
  hooks: PageHooks;
  /** The next frame the page can draw without a catch-up. */
  nextFrame: number;
}

/** How long an idle page waits for another chunk of its render before it closes. */
const IDLE_MS = 120_000;

export class PagePool {
  private readonly idle: { page: WarmPage; timer: NodeJS.Timeout }[] = [];

  constructor(private readonly maxIdle = 1) {}

  /** A warm page for `key`, taken out of the pool; undefined when there is none. */
  take(key: string): WarmPage | undefined {
    const index = this.idle.findIndex((entry) => entry.page.key === key);
    if (index < 0) return undefined;
    const [entry] = this.idle.splice(index, 1);
    clearTimeout(entry!.timer);
    return entry!.page;
  }

  /** Keeps `page` for a later render; the oldest idle page goes when the pool is full. */
  give(page: WarmPage): void {
    const timer = setTimeout(() => void this.drop(page), IDLE_MS);
    timer.unref();
    this.idle.push({ page, timer });
    while (this.idle.length > this.maxIdle) void this.drop(this.idle[0]!.page);
  }

  get size(): number {
    return this.idle.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.idle.map((entry) => this.drop(entry.page)));
  }

  private async drop(page: WarmPage): Promise<void> {
    const index = this.idle.findIndex((entry) => entry.page === page);
    if (index >= 0) clearTimeout(this.idle.splice(index, 1)[0]!.timer);
    await Promise.all([page.session.close(), page.server.close()]).catch(() => undefined);
  }
}

/** The pool of this process (a render worker keeps one page per worker loop, see closeWarmPages). */
export const warmPages = new PagePool(2);

/** Closes every warm page and the spare browser of this process (worker shutdown). */
export async function closeWarmPages(): Promise<void> {
  await Promise.all([warmPages.close(), closeSpareBrowser()]);
}
