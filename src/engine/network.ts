// What the page may fetch. The project origin is always allowed. Well-known CDN URLs of GSAP
// (jsdelivr, unpkg, cdnjs) are answered from the local `gsap` npm package, so renders work offline
// and every render uses the same bytes. Anything else is allowed only when the caller allows the
// network (local renders: yes; the service: no by default).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { gsapDistFileForUrl } from "../shared/cdn";

let gsapDistDir: string | undefined;

function localGsapDir(): string {
  if (!gsapDistDir) {
    const require = createRequire(import.meta.url);
    gsapDistDir = join(dirname(require.resolve("gsap/package.json")), "dist");
  }
  return gsapDistDir;
}

/** The local file that answers a GSAP CDN URL, or undefined when the URL is not one. */
export function gsapFileForUrl(url: string): string | undefined {
  const file = gsapDistFileForUrl(url);
  return file ? gsapDistFile(file) : undefined;
}

/**
 * A file of the local GSAP package's dist folder by name (`gsap.min.js`), for servers that give
 * <svc-player> its `library-base`; undefined for anything but a plain file name.
 */
export function gsapDistFile(name: string): string | undefined {
  return /^[\w-][\w.-]*\.js$/.test(name) ? join(localGsapDir(), name) : undefined;
}

export interface NetworkPolicy {
  projectOrigin: string;
  allowNetwork: boolean;
  /** Called with each refused URL, so the render can warn about it. */
  onBlocked?: (url: string) => void;
}

export async function applyNetworkPolicy(
  context: BrowserContext,
  policy: NetworkPolicy,
): Promise<void> {
  await context.route(
    (url) => url.origin !== policy.projectOrigin,
    async (route) => {
      const url = route.request().url();
      if (url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
      const gsapFile = gsapFileForUrl(url);
      if (gsapFile) {
        try {
          const body = await readFile(gsapFile);
          return route.fulfill({
            status: 200,
            contentType: "text/javascript; charset=utf-8",
            body,
          });
        } catch {
          return route.fulfill({ status: 404, body: `GSAP file not in the local package: ${url}` });
        }
      }
      if (policy.allowNetwork) return route.continue();
      policy.onBlocked?.(url);
      return route.abort("blockedbyclient");
    },
  );
}
