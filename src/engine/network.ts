// What the page may fetch. The project origin is always allowed. Well-known CDN URLs of GSAP
// (jsdelivr, unpkg, cdnjs) are answered from the local `gsap` npm package, so renders work offline
// and every render uses the same bytes. Anything else is allowed only when the caller allows the
// network (local renders: yes; the service: no by default).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
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

/** The part of a protocol session the policy needs (a page or a worker of it). */
export interface PolicyTarget {
  send(method: string, params?: object): Promise<unknown>;
  on(method: string, handler: (params: Record<string, unknown>) => void): void;
}

/**
 * Pauses every request of the target (Fetch domain) and answers it by the policy. data: and blob:
 * URLs never reach the network, so the browser does not pause them.
 */
export async function applyNetworkPolicy(
  target: PolicyTarget,
  policy: NetworkPolicy,
): Promise<void> {
  target.on("Fetch.requestPaused", (params) => {
    const requestId = params.requestId as string;
    const url = (params.request as { url: string }).url;
    void answerRequest(target, requestId, url, policy).catch(() => undefined); // page gone
  });
  await target.send("Fetch.enable", { patterns: [{ urlPattern: "*", requestStage: "Request" }] });
}

async function answerRequest(
  target: PolicyTarget,
  requestId: string,
  url: string,
  policy: NetworkPolicy,
): Promise<unknown> {
  if (originOf(url) === policy.projectOrigin)
    return target.send("Fetch.continueRequest", { requestId });
  const gsapFile = gsapFileForUrl(url);
  if (gsapFile) {
    const body = await readFile(gsapFile).catch(() => undefined);
    return target.send("Fetch.fulfillRequest", {
      requestId,
      responseCode: body ? 200 : 404,
      responseHeaders: [
        { name: "Content-Type", value: body ? "text/javascript; charset=utf-8" : "text/plain" },
        { name: "Access-Control-Allow-Origin", value: "*" },
      ],
      body: (body ?? Buffer.from(`GSAP file not in the local package: ${url}`)).toString("base64"),
    });
  }
  if (policy.allowNetwork) return target.send("Fetch.continueRequest", { requestId });
  policy.onBlocked?.(url);
  return target.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" });
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
