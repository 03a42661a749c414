// Which library files the preview page answers under /libs/cdn/: only those its compositions
// load (svc's `cdnAllowlist`: each CDN URL their files name, the page files of those packages and
// the fonts of the Google Fonts families named), not any file of any package svc can read. The
// page is public (no token), so this is what keeps /libs/cdn/ from serving package manifests,
// sources and source maps of the server's own dependencies, or fetching any package from npm.
// The list is read from the composition files again at most every few seconds, so a composition
// added while the server runs previews with its libraries.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { cdnAllowlist, cdnAllowlistAllows, type CdnAllowlist } from "svc/player-assets";
import type { CompositionLibrary } from "./compositions";

/** Files whose text can name a CDN URL: pages, scripts, styles and data. */
const TEXT_FILE = /\.(?:html?|m?js|css|json|svg)$/i;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_FILES = 2_000;
const FRESH_MS = 3_000;

export class PageLibraries {
  private cached: { list: CdnAllowlist; at: number } | undefined;
  private reading: Promise<CdnAllowlist> | undefined;

  constructor(
    private readonly compositions: CompositionLibrary,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a page of these compositions may load `url` (a CDN URL). */
  async allows(url: string): Promise<boolean> {
    return cdnAllowlistAllows(await this.list(), url);
  }

  private async list(): Promise<CdnAllowlist> {
    if (this.cached && this.now() - this.cached.at < FRESH_MS) return this.cached.list;
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<CdnAllowlist> {
    const texts: string[] = [];
    for (const name of await this.compositions.list()) {
      await collectTexts(join(this.compositions.root, name), texts);
      if (texts.length >= MAX_FILES) break;
    }
    const list = cdnAllowlist(texts);
    this.cached = { list, at: this.now() };
    return list;
  }
}

async function collectTexts(dir: string, texts: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    // Dot files and folders are never served (compositions.ts), node_modules is no page's.
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    if (texts.length >= MAX_FILES) return;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await collectTexts(path, texts);
    else if (entry.isFile() && TEXT_FILE.test(entry.name)) {
      const info = await stat(path).catch(() => undefined);
      if (info && info.size <= MAX_FILE_BYTES) texts.push(await readFile(path, "utf8"));
    }
  }
}
