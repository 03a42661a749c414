// The embedded default: with SVC_API_URL unset and nothing listening, a command starts the local
// service in-process (data under ~/.svc/local), says so on stderr, uses its own key, and stops it
// afterwards. The real default port is 7733; the test points the default URL at a free port so
// it never collides with a service a developer is running.
import { createServer } from "node:net";
import { mkdtemp, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ApiClient } from "../../core/api-client";
import { loadClientConfig } from "../../core/config";
import { resolveCredential } from "../../core/credentials";
import { isServiceAnswering } from "../../core/local-service";
import { ensureLocalService } from "./context";
import { recordingIo } from "../io";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe("the embedded local service", () => {
  it("starts when nothing answers, serves the command with its own key, and stops afterwards", async () => {
    const home = await mkdtemp(join(tmpdir(), "svc-local-service-test-"));
    const config = {
      ...loadClientConfig({ HOME: home }),
      apiUrl: `http://127.0.0.1:${await freePort()}`,
    };
    expect(config.usesDefaultService).toBe(true);
    expect(await isServiceAnswering(config.apiUrl)).toBe(false);

    const io = recordingIo({ ...process.env, HOME: home });
    const local = await ensureLocalService(io, config);
    try {
      expect(local.embedded).toBe(true);
      expect(io.err()).toContain(`no service on ${config.apiUrl}; started the local service`);
      expect(io.err()).toContain(join(home, ".svc", "local"));
      expect((await stat(join(home, ".svc", "local", "credentials"))).mode & 0o777).toBe(0o600);
      const credential = await resolveCredential(config, { HOME: home });
      expect(credential).toMatchObject({ source: "local-service" });
      const client = new ApiClient({ baseUrl: config.apiUrl, credential: credential!.secret });
      expect((await client.me()).email).toBe("local@localhost");
      // A second command finds it running and starts nothing.
      expect((await ensureLocalService(io, config)).embedded).toBe(false);
    } finally {
      await local.close();
    }
    expect(await isServiceAnswering(config.apiUrl)).toBe(false);
  });
});
