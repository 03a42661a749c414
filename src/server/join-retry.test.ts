// The join of a render in chunks is retried like any job before the render fails, and a render
// whose join never succeeds says that joining the chunks failed (not "the encoder"). What fails
// is real: the composition's audio is on an HTTP server of the test, which serves the browser but
// answers the join (which downloads the audio again for the mix) with an error — once, or every
// time.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeMedia } from "../engine/testing/probe";
import {
  api,
  queryServiceDatabase,
  startService,
  tempDir,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip } from "./testing/zip-builder";

const TONE = resolve(import.meta.dirname, "../../examples/with-audio/tone.wav");
const MAX_ATTEMPTS = 3;

let dir: string;
let svc: ServiceProcess;
let audioServer: Server;
let audioOrigin: string;
/** Requests the join made (any client but the browser), per path. */
const joinRequests = new Map<string, number>();

/** 2 s at 2 fps in segments of 2 frames, one segment (1 s) to a chunk: two chunks and a join. */
function composition(audioPath: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><style>
  html, body { margin: 0; background: #102030; }
  #box { position: absolute; top: 400px; left: 0; width: 200px; height: 200px; background: #e0a020;
         animation: slide 2s linear forwards; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(800px); } }
</style></head>
<body>
  <div id="root" data-composition-id="main" data-width="1080" data-height="1080" data-duration="2">
    <div id="box"></div>
    <audio src="${audioOrigin}${audioPath}" data-start="0.5" preload="auto"></audio>
  </div>
</body></html>
`;
}

beforeAll(async () => {
  dir = await tempDir("svc-join-retry-");
  const tone = await readFile(TONE);
  audioServer = createServer((request, response) => {
    const path = request.url ?? "";
    if (!/Chrome\//.test(request.headers["user-agent"] ?? "")) {
      const count = (joinRequests.get(path) ?? 0) + 1;
      joinRequests.set(path, count);
      const failing = path === "/gone/tone.wav" || (path === "/flaky/tone.wav" && count === 1);
      if (failing) {
        response.writeHead(503).end();
        return;
      }
    }
    response.writeHead(200, { "content-type": "audio/wav", "content-length": tone.length });
    response.end(tone);
  });
  await new Promise<void>((done) => audioServer.listen(0, "127.0.0.1", done));
  audioOrigin = `http://127.0.0.1:${(audioServer.address() as AddressInfo).port}`;
  svc = await startService({
    dataDir: join(dir, "data"),
    jobs: 2,
    env: {
      SVC_SERVER_MAX_CHUNKS: "32",
      SVC_SERVER_CHUNK_SECONDS: "1",
      SVC_SERVER_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      SVC_SERVER_ALLOW_PAGE_NETWORK: "1",
    },
  });
}, 120_000);

afterAll(async () => {
  await svc?.kill();
  await new Promise((done) => audioServer?.close(done));
});

async function render(
  audioPath: string,
): Promise<{ renderId: string; record: Record<string, unknown> }> {
  const zip = buildZip([{ name: "index.html", data: composition(audioPath), deflate: true }]);
  const { assetId, complete } = await uploadProject(svc, svc.apiKey, zip);
  expect(complete.status).toBe(200);
  const submitted = await api(svc, "POST", "/v3/svc/renders", {
    key: svc.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, fps: 2, quality: "draft" },
  });
  expect(submitted.status).toBe(201);
  const renderId = submitted.body.data.render_id as string;
  return { renderId, record: await waitForTerminalRender(svc, renderId, 240_000) };
}

async function joinAttempts(renderId: string): Promise<number | undefined> {
  const [row] = await queryServiceDatabase<{ attempts: number }>(
    svc.dataDir,
    "select attempts from jobs where id = ?",
    [`${renderId}:join`],
  );
  return row?.attempts;
}

describe("the join of a render in chunks", () => {
  it("is offered again after a failure, and the render completes with its audio", async () => {
    const { renderId, record } = await render("/flaky/tone.wav");
    expect(record.status, String(record.failure_message)).toBe("completed");
    const [row] = await queryServiceDatabase<{ chunk_count: number }>(
      svc.dataDir,
      "select chunk_count from renders where id = ?",
      [renderId],
    );
    expect(row?.chunk_count).toBe(2);
    expect(joinRequests.get("/flaky/tone.wav")).toBeGreaterThanOrEqual(2);
    expect(await joinAttempts(renderId)).toBe(2);
    const video = join(dir, "flaky.mp4");
    await writeFile(
      video,
      Buffer.from(await (await fetch(record.video_url as string)).arrayBuffer()),
    );
    const info = await probeMedia(video);
    expect(info.streams.map((stream) => stream.type).sort()).toEqual(["audio", "video"]);
  }, 300_000);

  it("fails the render once every attempt failed, saying that joining the chunks failed, charging nothing", async () => {
    const { renderId, record } = await render("/gone/tone.wav");
    expect(record.status).toBe("failed");
    expect(record.failure_code).toBe("svc_join_failed");
    expect(record.failure_message).toMatch(
      /^joining the rendered chunks into the video failed on all 3 attempts/,
    );
    expect(record.failure_message).not.toMatch(/encoder/);
    expect(record.credits_charged).toBe(0);
    expect(joinRequests.get("/gone/tone.wav")).toBe(MAX_ATTEMPTS);
    expect(await joinAttempts(renderId)).toBe(MAX_ATTEMPTS);
  }, 300_000);
});
