// What the page may fetch. The project origin is always allowed. Well-known CDN URLs are answered
// by svc itself (src/shared/cdn.ts says which URLs, src/node/cdn-files.ts finds the file): GSAP and
// Google Fonts from npm packages svc depends on, any other npm library from the npm registry through
// the library cache (fetched by svc, not the page, even when the page may not use the network), so
// renders and previews use the same bytes. Anything else is allowed only when the caller allows
// the network (local renders: yes; the service: no by default).
import { cdnAnswer } from "../node/cdn-files";
import type { ResolvedLibrary } from "../node/library-cache";

/**
 * What a page may reach beyond the project and the CDN files answered locally: everything
 * (true), nothing (false), or only the listed origins (`https://cdn.example.com`).
 */
export type NetworkAccess = boolean | { origins: readonly string[] };

/** Whether `access` lets the page fetch `url` from the network. */
export function networkAllows(access: NetworkAccess, url: string): boolean {
  if (typeof access === "boolean") return access && /^https?:\/\//i.test(url);
  const origin = originOf(url);
  return origin !== undefined && /^https?:/.test(origin) && access.origins.includes(origin);
}

export interface NetworkPolicy {
  projectOrigin: string;
  allowNetwork: NetworkAccess;
  /** Called with each refused URL (and why svc could not answer it), so the render can warn. */
  onBlocked?: (url: string, reason?: string) => void;
  /** Called with each CDN URL answered with an npm library: the render records the versions. */
  onLibrary?: (url: string, library: ResolvedLibrary) => void;
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
  const answer = await cdnAnswer(url).catch(() => undefined);
  const local = answer?.file;
  if (answer?.library) policy.onLibrary?.(url, answer.library);
  if (local) {
    return target.send("Fetch.fulfillRequest", {
      requestId,
      responseCode: 200,
      responseHeaders: [
        { name: "Content-Type", value: local.contentType },
        { name: "Access-Control-Allow-Origin", value: "*" },
      ],
      body: local.body.toString("base64"),
    });
  }
  if (networkAllows(policy.allowNetwork, url))
    return target.send("Fetch.continueRequest", { requestId });
  policy.onBlocked?.(url, answer?.problem?.message);
  return target.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" });
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
