// Outbound HTTP for webhooks and `url` projects, with the SSRF guard: the host is resolved once,
// every address is checked (private, loopback, link-local, multicast... refused unless the
// configuration allows them) and the connection is pinned to the checked address so a second
// DNS answer cannot swap it. Bodies are capped and requests time out.
//
// A refusal says nothing about name resolution (issue 41): a host that does not resolve and one
// that resolves to a private address get the same reason and sentence, which names neither the
// address nor its kind, and the scheme is checked before the name is looked up whenever the
// answer cannot depend on it. Otherwise a caller could ask the service which internal names exist.
// Connection failures name their error code, not the address connected to.
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";

export interface TargetPolicy {
  allowPrivate: boolean;
  /** Plain http is allowed only to loopback hosts, and only when this is set. */
  allowHttpLoopback: boolean;
  /** Plain http to any host (project downloads); the private-address check still applies. */
  allowHttp?: boolean;
  /** How host names are resolved; default the system's resolver (a test gives its own). */
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

const systemResolve = (host: string) => dnsLookup(host, { all: true });

export class OutboundError extends Error {
  override readonly name = "OutboundError";
  constructor(
    readonly reason:
      | "invalid_url"
      | "insecure_scheme"
      /** The host does not resolve, or resolves to an address the policy refuses: one answer. */
      | "refused_target"
      | "too_large"
      | "timeout"
      | "network"
      | "redirect",
    message: string,
  ) {
    super(message);
  }
}

const privateV4: Array<[string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const privateV6: Array<[string, number]> = [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96],
];
const blocked = new BlockList();
for (const [net, prefix] of privateV4) blocked.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of privateV6) blocked.addSubnet(net, prefix, "ipv6");

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPrivateAddress(mapped[1]!);
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6");
}

export function isLoopbackAddress(address: string): boolean {
  return /^127\./.test(address) || address === "::1" || /^::ffff:127\./i.test(address);
}

export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** Parses and resolves a target URL and applies the policy. Throws OutboundError. */
export async function checkTarget(raw: string, policy: TargetPolicy): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError("invalid_url", `"${raw}" is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new OutboundError("insecure_scheme", "only https URLs are allowed");
  }
  if (url.username || url.password)
    throw new OutboundError("invalid_url", "URLs with credentials are not allowed");
  if (url.protocol === "http:" && !policy.allowHttp && !policy.allowHttpLoopback) {
    throw new OutboundError("insecure_scheme", "the URL must use https");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const refused = () =>
    new OutboundError("refused_target", `${host} is not a public address the service may reach`);
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await (policy.resolve ?? systemResolve)(host);
  } catch {
    throw refused();
  }
  if (addresses.length === 0) throw refused();
  const loopbackOnly = addresses.every((a) => isLoopbackAddress(a.address));
  if (
    url.protocol === "http:" &&
    !policy.allowHttp &&
    !(policy.allowHttpLoopback && loopbackOnly)
  ) {
    throw new OutboundError("insecure_scheme", "the URL must use https");
  }
  if (!policy.allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) throw refused();
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface OutboundRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
  /** Redirects to follow (each target re-checked). Default 0: a 3xx is returned as is. */
  maxRedirects?: number;
  signal?: AbortSignal;
}

export async function guardedRequest(
  raw: string,
  policy: TargetPolicy,
  request: OutboundRequest,
): Promise<OutboundResponse> {
  let current = raw;
  for (let hop = 0; ; hop++) {
    const target = await checkTarget(current, policy);
    const response = await send(target, request);
    const location = response.headers.location;
    if (
      response.status >= 300 &&
      response.status < 400 &&
      location &&
      (request.maxRedirects ?? 0) > hop
    ) {
      current = new URL(location, target.url).toString();
      continue;
    }
    if (response.status >= 300 && response.status < 400 && (request.maxRedirects ?? 0) > 0) {
      throw new OutboundError("redirect", "too many redirects");
    }
    return response;
  }
}

function send(target: CheckedTarget, request: OutboundRequest): Promise<OutboundResponse> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (typeof options === "object" && options.all) {
      callback(null, [{ address: target.address, family: target.family }]);
    } else {
      callback(null, target.address, target.family);
    }
  };
  const client = target.url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      target.url,
      {
        method: request.method ?? "GET",
        headers: request.headers,
        lookup: pinned,
        timeout: request.timeoutMs,
        signal: request.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > request.maxBytes) {
            req.destroy(
              new OutboundError(
                "too_large",
                `the response is larger than ${request.maxBytes} bytes`,
              ),
            );
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on("error", reject);
      },
    );
    const timer = setTimeout(
      () =>
        req.destroy(
          new OutboundError("timeout", `no complete answer within ${request.timeoutMs} ms`),
        ),
      request.timeoutMs,
    );
    req.on("close", () => clearTimeout(timer));
    req.on("timeout", () =>
      req.destroy(new OutboundError("timeout", `no answer within ${request.timeoutMs} ms`)),
    );
    req.on("error", (error) =>
      reject(
        error instanceof OutboundError
          ? error
          : new OutboundError(
              "network",
              `the connection failed (${(error as NodeJS.ErrnoException).code ?? "no answer"})`,
            ),
      ),
    );
    req.end(request.body);
  });
}
