// What the page may fetch. The project origin is always allowed. Well-known CDN URLs are answered
// by svc itself (src/shared/cdn.ts says which URLs, src/node/cdn-files.ts finds the file): GSAP and
// Google Fonts from npm packages svc depends on, any other npm library from the npm registry through
// the library cache (fetched by svc, not the page, even when the page may not use the network), so
// renders and previews use the same bytes. Anything else is allowed only when the caller allows
// the network (local renders: yes; the service: no by default).
// A page whose network is not wide open runs in a closed browser (confinement.ts: no route out,
// not even to loopback), so what it may have is fetched by this process and handed to it
// (Fetch.fulfillRequest): the project's files from the project server, and the allowed origins.
// Nothing the page asks for reaches a network by the browser's own means.
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { cdnAnswer } from "../../node/index";
import type { ResolvedLibrary } from "../../node/index";

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

/** The page's network is closed: its browser is too, and every answer comes from this process. */
export function networkClosed(access: NetworkAccess): boolean {
  return access !== true;
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
    const request = params.request as PausedRequest;
    void answerRequest(target, requestId, request, policy).catch(() => undefined); // page gone
  });
  await target.send("Fetch.enable", { patterns: [{ urlPattern: "*", requestStage: "Request" }] });
}

/** What Fetch.requestPaused says of a request. */
interface PausedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  postData?: string;
}

async function answerRequest(
  target: PolicyTarget,
  requestId: string,
  request: PausedRequest,
  policy: NetworkPolicy,
): Promise<unknown> {
  const { url } = request;
  // Closed browsers reach nothing (confinement.ts), so svc hands them what they may have; a
  // browser whose page may use the network fetches it itself.
  const closed = networkClosed(policy.allowNetwork);
  if (originOf(url) === policy.projectOrigin) {
    return closed
      ? fulfillFromHere(target, requestId, request)
      : target.send("Fetch.continueRequest", { requestId });
  }
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
  if (networkAllows(policy.allowNetwork, url)) {
    return closed
      ? fulfillFromHere(target, requestId, request)
      : target.send("Fetch.continueRequest", { requestId });
  }
  policy.onBlocked?.(url, answer?.problem?.message);
  return target.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" });
}

/**
 * The most one answer carries. A video asks for "bytes=N-" (the rest of the file); the answer is
 * a 206 of at most this much, and the browser's media loader asks for the next part when it
 * needs it, so a large video is never copied into one protocol message.
 */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** Headers that belong to one connection, not to the request or answer passed along. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "proxy-connection",
  "te",
  "trailer",
  "host",
]);
/** How long a file or an allowed origin may take to answer one request. */
const ANSWER_TIMEOUT_MS = 60_000;

/**
 * Fetches `request` from this process (which has the network the browser lacks) and hands the
 * answer to the page, redirects included: the browser follows them, and the policy sees the new
 * URL. Range requests are capped at MAX_ANSWER_BYTES.
 */
async function fulfillFromHere(
  target: PolicyTarget,
  requestId: string,
  request: PausedRequest,
): Promise<unknown> {
  const answer = await fetchHere(request).catch(() => undefined);
  if (!answer) return target.send("Fetch.failRequest", { requestId, errorReason: "Failed" });
  return target.send("Fetch.fulfillRequest", {
    requestId,
    responseCode: answer.status,
    responseHeaders: answer.headers,
    ...(answer.body.length > 0 ? { body: answer.body.toString("base64") } : {}),
  });
}

interface Answer {
  status: number;
  headers: { name: string; value: string }[];
  body: Buffer;
}

function cappedRange(range: string | undefined): string | undefined {
  const match = /^bytes=(\d+)-(\d*)$/.exec(range?.trim() ?? "");
  if (!match) return range;
  const start = Number(match[1]);
  const end = match[2] ? Number(match[2]) : Infinity;
  return `bytes=${start}-${Math.min(end, start + MAX_ANSWER_BYTES - 1)}`;
}

function fetchHere(paused: PausedRequest): Promise<Answer> {
  const url = new URL(paused.url);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(paused.headers)) {
    // Without Accept-Encoding the answer comes as plain bytes, which is what fulfillRequest takes.
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower) && lower !== "accept-encoding") headers[name] = value;
  }
  const rangeName = Object.keys(headers).find((name) => name.toLowerCase() === "range");
  if (rangeName) headers[rangeName] = cappedRange(headers[rangeName])!;
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<Answer>((resolve, reject) => {
    const outgoing = send(
      url,
      { method: paused.method, headers, timeout: ANSWER_TIMEOUT_MS },
      (incoming) => {
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on("data", (chunk: Buffer) => {
          size += chunk.length;
          // An answer without Range larger than this is not a file a render needs in one piece.
          if (size > 32 * MAX_ANSWER_BYTES) outgoing.destroy(new Error("answer too large"));
          else chunks.push(chunk);
        });
        incoming.on("error", reject);
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 502,
            headers: answerHeaders(incoming.headers),
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error("timed out")));
    outgoing.on("error", reject);
    outgoing.end(paused.postData);
  });
}

function answerHeaders(headers: IncomingHttpHeaders): { name: string; value: string }[] {
  const list: { name: string; value: string }[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) list.push({ name, value: one });
  }
  return list;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Installed in every frame of a closed page: names the attempts the Fetch domain never sees, so
 * the render can warn about them (they reach nothing either way: the browser has no network).
 * WebRTC servers and remote candidates, and DNS prefetch or preconnect hints to other origins.
 */
export const REFUSED_BINDING = "__svcNetworkRefused";

export const ATTEMPT_WATCH_SCRIPT = `(() => {
  const report = (url) => { try { globalThis.${REFUSED_BINDING}(String(url)); } catch {} };
  const Native = globalThis.RTCPeerConnection;
  if (Native) {
    const servers = (config) => ((config && config.iceServers) || []).flatMap((server) => [].concat(server.urls || server.url || []));
    const candidate = (init) => {
      const line = typeof init === "string" ? init : init && init.candidate;
      const match = typeof line === "string" && /\\s(\\S+)\\s(\\d+)\\s+typ\\s/.exec(line);
      if (match) report("webrtc:" + match[1] + ":" + match[2]);
    };
    class WatchedPeerConnection extends Native {
      constructor(config, ...rest) { servers(config).forEach(report); super(config, ...rest); }
      setConfiguration(config) { servers(config).forEach(report); return super.setConfiguration(config); }
      addIceCandidate(init, ...rest) { candidate(init); return super.addIceCandidate(init, ...rest); }
    }
    globalThis.RTCPeerConnection = WatchedPeerConnection;
    if (globalThis.webkitRTCPeerConnection) globalThis.webkitRTCPeerConnection = WatchedPeerConnection;
  }
  const hints = () => {
    for (const link of document.querySelectorAll("link[rel]")) {
      if (!/(^|\\s)(dns-prefetch|preconnect)(\\s|$)/i.test(link.rel)) continue;
      try {
        const origin = new URL(link.getAttribute("href") || "", location.href).origin;
        if (origin !== location.origin) report("dns-prefetch:" + origin);
      } catch {}
    }
  };
  addEventListener("DOMContentLoaded", hints, { once: true });
})();`;

/**
 * Watches `target` (a closed page, or a worker of it) for what the Fetch domain does not pause:
 * WebSockets (Network domain) and the attempts ATTEMPT_WATCH_SCRIPT reports.
 */
export async function watchRefusedAttempts(
  target: PolicyTarget,
  onBlocked: (url: string) => void,
  page: boolean,
): Promise<void> {
  target.on("Network.webSocketCreated", (params) => onBlocked(params.url as string));
  const steps: Promise<unknown>[] = [
    // No bodies kept: only the WebSocket events are wanted.
    target.send("Network.enable", { maxTotalBufferSize: 0, maxResourceBufferSize: 0 }),
  ];
  if (page) {
    target.on("Runtime.bindingCalled", (params) => {
      if (params.name === REFUSED_BINDING) onBlocked(params.payload as string);
    });
    steps.push(
      target.send("Runtime.addBinding", { name: REFUSED_BINDING }),
      target.send("Page.addScriptToEvaluateOnNewDocument", { source: ATTEMPT_WATCH_SCRIPT }),
    );
  }
  await Promise.all(steps);
}
