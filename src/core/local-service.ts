// The embedded default: when SVC_API_URL is unset the client uses the local service on
// 127.0.0.1:7733. This module only answers "is something serving there?"; starting the service
// in-process is the caller's choice (the CLI may import src/server, the core may not).
import got from "got";

/** True when `baseUrl` answers its health check within `timeoutMs`. */
export async function isServiceAnswering(baseUrl: string, timeoutMs = 1500): Promise<boolean> {
  try {
    const response = await got(`${baseUrl}/healthz`, {
      timeout: { request: timeoutMs },
      retry: { limit: 0 },
      throwHttpErrors: false,
    });
    return response.statusCode < 500;
  } catch {
    return false;
  }
}
