// Test support: a local HTTPS webhook receiver with a self-signed certificate (made with the
// openssl CLI) that records every delivery and can be told to fail the first N attempts.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export interface Delivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
}

export interface Receiver {
  url: string;
  certFile: string;
  deliveries: Delivery[];
  /** Callback ids whose first N deliveries get HTTP 500. */
  failFirst: Map<string, number>;
  close(): Promise<void>;
}

export async function startHttpsReceiver(dir: string): Promise<Receiver> {
  const keyFile = join(dir, "receiver-key.pem");
  const certFile = join(dir, "receiver-cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    { stdio: "ignore" },
  );
  const deliveries: Delivery[] = [];
  const failFirst = new Map<string, number>();
  const seen = new Map<string, number>();
  const server: Server = createServer(
    { key: readFileSync(keyFile), cert: readFileSync(certFile) },
    (request, response) => {
      let body = "";
      request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      request.on("end", () => {
        let callbackId = "";
        try {
          callbackId = String((JSON.parse(body) as { callback_id?: string }).callback_id ?? "");
        } catch {
          // recorded as is
        }
        const count = (seen.get(callbackId) ?? 0) + 1;
        seen.set(callbackId, count);
        const status = count <= (failFirst.get(callbackId) ?? 0) ? 500 : 200;
        deliveries.push({ headers: request.headers, body, status });
        response.writeHead(status).end();
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    certFile,
    deliveries,
    failFirst,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
