// The npm configuration svc reaches the registry with, read the way npm reads it for the settings
// that matter here: `registry`, `https-proxy` / `proxy` (and HTTPS_PROXY / HTTP_PROXY, NO_PROXY),
// `cafile`, `strict-ssl`; from npm_config_* environment variables first, then the user's .npmrc
// (NPM_CONFIG_USERCONFIG or ~/.npmrc). So a machine that installs packages through a proxy or a
// mirror fetches CDN libraries (library-cache.ts) through the same one. Auth tokens are not read:
// CDN libraries are public packages.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
// undici is loaded when a library is first fetched, not with the engine: every `svc render` loads
// this module and most never reach the registry (~0.1 s of CPU at start).
import type * as UndiciModule from "undici";
import type { Dispatcher, Response } from "undici";

type Undici = typeof UndiciModule;

export const DEFAULT_REGISTRY = "https://registry.npmjs.org/";

export interface NpmConfig {
  registry: string;
  proxy: string | undefined;
  noProxy: string[];
  /** PEM text of extra certificate authorities (`cafile`). */
  ca: string | undefined;
  strictSsl: boolean;
}

/** npm's settings from the environment and the user's .npmrc. */
export function npmConfig(env: NodeJS.ProcessEnv = process.env): NpmConfig {
  const rc = readNpmrc(
    env.NPM_CONFIG_USERCONFIG || env.npm_config_userconfig || join(homedir(), ".npmrc"),
  );
  const get = (key: string): string | undefined => {
    const envKey = `npm_config_${key.replace(/-/g, "_")}`;
    return env[envKey] || env[envKey.toUpperCase()] || rc[key] || undefined;
  };
  const registry = get("registry") ?? DEFAULT_REGISTRY;
  const https = registry.startsWith("https:");
  const proxy =
    (https ? get("https-proxy") : undefined) ??
    get("proxy") ??
    (https ? env.HTTPS_PROXY || env.https_proxy : undefined) ??
    (env.HTTP_PROXY || env.http_proxy || undefined);
  const noProxy = (get("noproxy") ?? env.NO_PROXY ?? env.no_proxy ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  const cafile = get("cafile");
  let ca: string | undefined;
  if (cafile) {
    try {
      ca = readFileSync(cafile, "utf8");
    } catch {
      ca = undefined; // npm itself fails here; svc goes on with the system's authorities
    }
  }
  return { registry, proxy, noProxy, ca, strictSsl: get("strict-ssl") !== "false" };
}

/** `key=value` lines of an .npmrc (comments and sections skipped, ${VAR} expanded). */
function readNpmrc(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return {};
  }
  const values: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const at = line.indexOf("=");
    if (at <= 0) continue;
    const key = line.slice(0, at).trim();
    const value = line
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .replace(/\$\{([^}]+)\}/g, (_whole, name: string) => process.env[name] ?? "");
    values[key] = value;
  }
  return values;
}

const dispatchers = new Map<string, Dispatcher>();

function dispatcherFor(undici: Undici, config: NpmConfig, url: string): Dispatcher {
  const host = new URL(url).hostname;
  const bypass = config.noProxy.some(
    (entry) =>
      entry === "*" ||
      host === entry.replace(/^\./, "") ||
      host.endsWith(`.${entry.replace(/^\./, "")}`),
  );
  const proxy = bypass ? undefined : config.proxy;
  const key = JSON.stringify([proxy, config.ca?.length, config.strictSsl]);
  let dispatcher = dispatchers.get(key);
  if (!dispatcher) {
    const tls = {
      ...(config.ca ? { ca: config.ca } : {}),
      rejectUnauthorized: config.strictSsl,
    };
    dispatcher = proxy
      ? new undici.ProxyAgent({ uri: proxy, requestTls: tls })
      : new undici.Agent({ connect: tls });
    dispatchers.set(key, dispatcher);
  }
  return dispatcher;
}

/** A GET of a registry URL through npm's proxy and certificate settings. */
export async function registryFetch(
  config: NpmConfig,
  url: string,
  init: { headers?: Record<string, string>; signal?: AbortSignal },
): Promise<Response> {
  const undici = await import("undici");
  return undici.fetch(url, { ...init, dispatcher: dispatcherFor(undici, config, url) });
}
