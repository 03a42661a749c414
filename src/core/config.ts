// Where the client talks to and where it keeps its files. The base URL comes from SVC_API_URL
// (empty means unset, trailing slashes stripped); without it the client uses the local service
// on 127.0.0.1:7733, which the CLI starts in-process when nothing answers there.
import { homedir } from "node:os";
import { join } from "node:path";
import { LOCAL_SERVICE_PORT } from "../shared/limits";

export const DEFAULT_API_URL = `http://127.0.0.1:${LOCAL_SERVICE_PORT}`;

export interface ClientConfig {
  /** Base URL of the render service, without a trailing slash. */
  apiUrl: string;
  /** True when SVC_API_URL is unset and the local service is meant. */
  usesDefaultService: boolean;
  /** Folder of the credential file (SVC_CONFIG_DIR, else ~/.svc). */
  configDir: string;
  /** Data folder of the local service (~/.svc/local); holds its own key file. */
  localDataDir: string;
}

export function loadClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const raw = env.SVC_API_URL?.trim() ?? "";
  const apiUrl = raw.replace(/\/+$/, "");
  const home = env.HOME?.trim() || homedir();
  const configDir = env.SVC_CONFIG_DIR?.trim() || join(home, ".svc");
  return {
    apiUrl: apiUrl || DEFAULT_API_URL,
    usesDefaultService: apiUrl === "",
    configDir,
    localDataDir: join(home, ".svc", "local"),
  };
}

/** The key file the local service writes on its first start. */
export function localServiceKeyFile(config: ClientConfig): string {
  return join(config.localDataDir, "credentials");
}
