// Serves a project folder to the page over a local origin (never file://), so fetch(), module
// scripts, fonts and sub-compositions behave as on a web server: the Node tier's loopback file
// server parts (src/node/static-files.ts: paths kept inside the project, symlinks included; Range
// for media seeking; the Host check). One thing is not served as it is: an entry page written as
// a fragment (no doctype, no <html>) is wrapped in a document the way the reference's compile step
// wraps it, in standards mode with margins reset and a black body, instead of a quirks-mode page
// whose body's 8 px margin draws white lines along the top and left edges.
import { readFile, realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { findFile, sendFile, startLoopbackServer } from "../../node/index";

export interface ProjectServer {
  origin: string;
  close(): Promise<void>;
}

/** The reference's wrapper of a fragment page (its producer's htmlCompiler, ensureFullDocument). */
const FRAGMENT_HEAD =
  '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="UTF-8">\n<style>*{margin:0;padding:0;box-sizing:border-box;text-rendering:geometricPrecision}body{overflow:hidden;background:#000;font-family:"Inter",sans-serif}</style>\n</head>\n<body style="margin:0;overflow:hidden">\n';

/** `html` as a whole document: as it is when it starts with a doctype or `<html>`, else wrapped. */
export function wholeDocument(html: string): string {
  const trimmed = html.replace(/^\uFEFF/, "").trim();
  if (/^<!DOCTYPE\s+html/i.test(trimmed) || /^<html/i.test(trimmed)) return html;
  return `${FRAGMENT_HEAD}${html}\n</body>\n</html>`;
}

export async function startProjectServer(projectDir: string): Promise<ProjectServer> {
  const root = await realpath(resolve(projectDir));
  const { origin, close } = await startLoopbackServer(async (req, res) => {
    const pathname = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const found = await findFile(root, pathname);
    if (!found) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`Not found: ${pathname}`);
      return;
    }
    // Only the page the browser opens (a top-level navigation); sub-composition files are
    // fetched and read for their body anyway, and an iframe's page is served as it is.
    if (req.headers["sec-fetch-dest"] === "document" && /\.html?$/i.test(found.file)) {
      const body = Buffer.from(wholeDocument(await readFile(found.file, "utf8")));
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-length": String(body.length),
        "cache-control": "no-cache",
      });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
    sendFile(req, res, found.file, found.size, { "cache-control": "no-cache" });
  });
  return { origin, close };
}
