// What the page may fetch. The project origin is always allowed. Well-known CDN URLs are answered
// from npm packages svc depends on (src/shared/cdn.ts says which URLs, src/node/cdn-files.ts reads
// the copies; the previews use the same), so renders work offline and every render uses the same
// bytes. Anything else is allowed only when the caller allows the network (local renders:
// yes; the service: no by default).
import { cdnResponse } from "../node/cdn-files";

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
  const local = await cdnResponse(url).catch(() => undefined);
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
