// templates/preview-render over HTTP, as a user's copy runs it (its own process, the real engine
// in its sandbox process, real Chromium and FFmpeg): the async and sync answers of SPEC.md
// section 8, stored videos with Range, file answers equal to svc's own file server's, every
// refusal with its code, the concurrency limit, and a render killed at the time limit. Renders
// are kept tiny (2-4 fps of a 3 s composition).
import { readFileSync } from "node:fs";
import { cp, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import BetterSqlite3 from "better-sqlite3";
import { startStaticServer } from "../src/node/static-files";
import { startService } from "../src/server/testing/service-process";
import {
  call,
  longComposition,
  probeStored,
  processesNaming,
  REPO,
  startTemplate,
  TEMPLATE_DIR,
  type TemplateApp,
  waitForResult,
} from "./template-app";

test("the svc package exports the entry points the repository's tsconfig maps for the template", () => {
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
    exports: Record<string, string>;
  };
  const tsconfig = JSON.parse(readFileSync(join(REPO, "tsconfig.json"), "utf8")) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  const exported = Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== "./package.json")
    .map(([subpath, file]) => [`svc${subpath.slice(1)}`, [file]]);
  expect(Object.fromEntries(exported)).toEqual(tsconfig.compilerOptions.paths);
  const template = JSON.parse(readFileSync(join(TEMPLATE_DIR, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  expect(template.dependencies.svc).toBe("file:../..");
});

test("a bad setting stops the template at start with a message naming it", async () => {
  await expect(startTemplate({ RENDER_MODE: "fast" })).rejects.toThrow(
    /exited with 2 before listening:[^]*RENDER_MODE must be "sync" or "async", not "fast"/,
  );
  await expect(startTemplate({ S3_BUCKET: "videos" })).rejects.toThrow(
    /exited with 2 before listening:[^]*S3_BUCKET is set without AWS_ENDPOINT_URL, so the bucket is on AWS S3: set AWS_REGION/,
  );
});

test.describe("async mode", () => {
  let app: TemplateApp;
  let compositions: string;
  test.beforeAll(async () => {
    // The bundled composition, next to a secret that must never be served.
    compositions = await mkdtemp(join(tmpdir(), "svc-template-compositions-"));
    await cp(join(TEMPLATE_DIR, "compositions"), compositions, { recursive: true });
    await writeFile(join(compositions, "title-card", ".env"), "SECRET=do-not-serve\n");
    await writeFile(join(compositions, "secret.txt"), "outside every composition\n");
    app = await startTemplate({ MAX_BODY_BYTES: "4096", COMPOSITIONS_DIR: compositions });
  });
  test.afterAll(async () => {
    await app?.stop();
    await rm(compositions, { recursive: true, force: true });
  });

  test("POST answers {call_id} at once, GET 202 until done, then the URL of the stored MP4 with Range", async () => {
    const posted = await call(app, "POST", "/api/render", {
      fps: 4,
      quality: "draft",
      variables: { title: "Async" },
    });
    expect(posted.status).toBe(202);
    expect(Object.keys(posted.body)).toEqual(["call_id"]);
    expect(posted.body.call_id).toMatch(/^call_[0-9a-f]{16}$/);
    expect(posted.ms).toBeLessThan(1000);
    expect(posted.headers.get("location")).toBe(`/api/render/${posted.body.call_id}`);

    const { answer, running } = await waitForResult(app, posted.body.call_id);
    expect(running).toBeGreaterThan(0);
    expect(answer.status).toBe(200);
    const name = `${posted.body.call_id}.mp4`;
    expect(answer.body).toEqual({
      call_id: posted.body.call_id,
      status: "done",
      url: `/renders/${name}`,
    });
    expect(await app.storedFiles()).toEqual([name]);
    expect(await readdir(app.workDir)).toEqual([]);

    const whole = await fetch(`${app.url}${answer.body.url}`);
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(whole.headers.get("content-type")).toBe("video/mp4");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    const ranged = await fetch(`${app.url}${answer.body.url}`, {
      headers: { range: "bytes=100-199" },
    });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 100-199/${bytes.length}`);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(bytes.subarray(100, 200));
    const past = await fetch(`${app.url}${answer.body.url}`, {
      headers: { range: `bytes=${bytes.length}-` },
    });
    expect(past.status).toBe(416);

    const stored = await probeStored(app, answer.body.url);
    expect(stored.video).toMatchObject({ codec: "h264", width: 1920, height: 1080, fps: 4 });
    expect(stored.durationSeconds).toBeCloseTo(3, 0);

    const unknown = await call(app, "GET", "/api/render/call_0000000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("render_not_found");
    expect((await call(app, "GET", "/renders/call_0000000000000000.mp4")).status).toBe(404);
  });

  test("refuses bad input with a code and starts nothing", async () => {
    const refusals: Array<[unknown, number, string, string?]> = [
      [{ composition: "no-such-thing" }, 422, "composition_not_found", "composition"],
      [{ composition: "../../etc" }, 400, "invalid_composition", "composition"],
      [{ composition: "title-card/../../.." }, 400, "invalid_composition", "composition"],
      [{ variables: { title: 5 } }, 422, "invalid_variables", "variables"],
      [{ variables: { titel: "typo" } }, 422, "invalid_variables", "variables"],
      [{ variables: { theme: "sepia" } }, 422, "invalid_variables", "variables"],
      [{ resolution: "4k", format: "webm" }, 400, "invalid_parameter", "format"],
      [{ fps: 0 }, 400, "invalid_parameter", "fps"],
      [{ fps: "30" }, 400, "invalid_parameter", "fps"],
      [{ aspect_ratio: "1:1" }, 400, "invalid_parameter", "aspect_ratio"],
      [[1, 2], 400, "invalid_parameter", "body"],
      ["{not json", 400, "invalid_json"],
      [{ variables: { title: "x".repeat(8000) } }, 413, "body_too_large"],
    ];
    for (const [body, status, code, param] of refusals) {
      const answer = await call(app, "POST", "/api/render", body);
      expect({ body, status: answer.status, code: answer.body.error?.code }).toEqual({
        body,
        status,
        code,
      });
      if (param) expect(answer.body.error.param).toBe(param);
      expect(answer.body.error.message.length).toBeGreaterThan(10);
    }
    const strict = await call(app, "POST", "/api/render", { variables: { titel: "typo" } });
    expect(strict.body.error.issues).toEqual([
      expect.objectContaining({ id: "titel", code: "undeclared" }),
    ]);
    const form = await call(app, "POST", "/api/render", "fps=30", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(form.status).toBe(415);
    expect(form.body.error.code).toBe("unsupported_media_type");

    // Paths outside a composition, hidden files, or paths outside the store are simply not there.
    expect((await call(app, "GET", "/compositions/title-card/index.html")).status).toBe(200);
    for (const path of [
      "/compositions/title-card/..%2Fsecret.txt",
      "/compositions/title-card/%2E%2E/secret.txt",
      "/compositions/title-card/..%2F..%2Fpackage.json",
      "/compositions/..%2Fsrc/server.ts",
      "/renders/..%2Fwork",
      "/renders/.hidden.mp4",
      "/compositions/title-card/.env",
      "/compositions/title-card/%2Eenv",
    ]) {
      expect({ path, status: (await call(app, "GET", path)).status }).toEqual({
        path,
        status: 404,
      });
    }
    expect(await app.storedFiles()).not.toContainEqual(expect.stringMatching(/^\./));
  });

  test("answers its files as svc's own file server does: Range, 416, a malformed Range, no way out, a foreign Host", async () => {
    const folder = join(compositions, "title-card");
    const link = join(folder, "link.txt");
    await symlink(join(compositions, "secret.txt"), link);
    const own = await startStaticServer(folder);
    try {
      const cases: Array<[string, Record<string, string>]> = [
        ["/index.html", {}],
        ["/index.html", { range: "bytes=2-4" }],
        ["/index.html", { range: "bytes=-5" }],
        ["/index.html", { range: "bytes=99999999-" }],
        ["/index.html", { range: "bytes=5-2" }],
        ["/index.html", { range: "items=0-1" }],
        ["/%2e%2e/secret.txt", {}],
        ["/link.txt", {}],
        ["/nothing.html", {}],
        ["/index.html", { host: "attacker.example" }],
      ];
      for (const [path, headers] of cases) {
        const template = await rawGet(`${app.url}/compositions/title-card${path}`, headers);
        const svcOwn = await rawGet(`${own.origin}${path}`, headers);
        expect({ path, headers, ...template }).toEqual({ path, headers, ...svcOwn });
      }
    } finally {
      await own.close();
      await rm(link);
    }
  });
});

/** A GET through node:http (any Host header), as what a client sees of a file answer. */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; range?: unknown; length?: unknown; ranges?: unknown; body?: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        // A refusal's body is each server's own words; its status is what must agree.
        if (status >= 400 && status !== 416) return resolve({ status });
        resolve({
          status,
          range: res.headers["content-range"],
          length: res.headers["content-length"],
          ...(status === 416 ? {} : { ranges: res.headers["accept-ranges"], body }),
        });
      });
    })
      .on("error", reject)
      .end();
  });
}

test("sync mode: POST answers with the URL of a valid MP4", async () => {
  const app = await startTemplate({ RENDER_MODE: "sync" });
  try {
    const answer = await call(app, "POST", "/api/render", { fps: 2, quality: "draft" });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: "done",
      url: expect.stringMatching(/^\/renders\/call_[0-9a-f]{16}\.mp4$/),
    });
    const stored = await probeStored(app, answer.body.url);
    expect(stored.video).toMatchObject({ codec: "h264", width: 1920, height: 1080, fps: 2 });
  } finally {
    await app.stop();
  }
});

test("a render over the time limit is killed, stores nothing and says why; the limit on concurrent renders answers 429", async () => {
  const compositions = await longComposition();
  const app = await startTemplate({
    COMPOSITIONS_DIR: compositions,
    MAX_CONCURRENT_RENDERS: "1",
    RENDER_TIME_LIMIT_SECONDS: "8",
  });
  try {
    const first = await call(app, "POST", "/api/render", { composition: "long", fps: 30 });
    expect(first.status).toBe(202);
    const busy = await call(app, "POST", "/api/render", { composition: "long" });
    expect(busy.status).toBe(429);
    expect(busy.body.error.code).toBe("too_many_renders");
    expect(Number(busy.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    const { answer } = await waitForResult(app, first.body.call_id);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: "failed", error: { code: "render_timeout" } });
    expect(answer.body.error.message).toContain("8 s time limit");
    expect(await app.storedFiles()).toEqual([]);
    expect(await readdir(app.workDir)).toEqual([]);
    // The sandbox's processes (its node, Chromium, FFmpeg) are gone with it.
    expect(await processesNaming(app.workDir)).toEqual([]);

    // The slot is free again.
    const again = await call(app, "POST", "/api/render", { composition: "long", fps: 1 });
    expect(again.status).toBe(202);
  } finally {
    await app.stop();
    await rm(compositions, { recursive: true, force: true });
  }
});

test("service mode: two renders with different variables upload the composition once and render twice on the service", async () => {
  const service = await startService({ jobs: 1 });
  const app = await startTemplate({
    RENDER_MODE: "sync",
    SVC_API_URL: service.url,
    SVC_API_KEY: service.apiKey,
    SVC_POLL_INTERVAL_SECONDS: "1",
  });
  try {
    const health = await call(app, "GET", "/healthz");
    expect(health.body).toMatchObject({ renderer: "service", mode: "sync" });
    const files: Buffer[] = [];
    for (const title of ["Grace Hopper", "Alan Turing"]) {
      const answer = await call(app, "POST", "/api/render", {
        fps: 2,
        quality: "draft",
        variables: { title },
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ status: "done" });
      const stored = await probeStored(app, answer.body.url);
      expect(stored.video).toMatchObject({ width: 1920, height: 1080, fps: 2 });
      files.push(stored.bytes);
    }
    expect(files[0]!.equals(files[1]!)).toBe(false);
    expect(await app.storedFiles()).toHaveLength(2);

    const db = new BetterSqlite3(join(service.dataDir, "svc.db"), { readonly: true });
    try {
      const count = (table: string) =>
        (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
      expect(count("assets")).toBe(1);
      expect(count("renders")).toBe(2);
      const renders = db
        .prepare("select asset_id, variables_json, status from renders order by created_ms")
        .all() as Array<{ asset_id: string; variables_json: string; status: string }>;
      expect(new Set(renders.map((render) => render.asset_id)).size).toBe(1);
      expect(renders.map((render) => JSON.parse(render.variables_json).title)).toEqual([
        "Grace Hopper",
        "Alan Turing",
      ]);
      expect(renders.map((render) => render.status)).toEqual(["completed", "completed"]);
    } finally {
      db.close();
    }
  } finally {
    await app.stop();
    await service.kill();
  }
});

test("a server that dies mid-render leaves no render running", async () => {
  const compositions = await longComposition();
  const app = await startTemplate({ COMPOSITIONS_DIR: compositions });
  try {
    const posted = await call(app, "POST", "/api/render", { composition: "long", fps: 1 });
    expect(posted.status).toBe(202);
    await expect
      .poll(
        async () => (await call(app, "GET", `/api/render/${posted.body.call_id}`)).body.progress,
        { timeout: 90_000 },
      )
      .toBeGreaterThan(0);
    // Chromium and FFmpeg of the sandbox are running (their command lines name its temp folder).
    expect((await processesNaming(app.workDir)).length).toBeGreaterThan(0);
    // SIGKILL: the server cleans up nothing. Its sandbox notices and stops the engine.
    app.child.kill("SIGKILL");
    await expect.poll(() => processesNaming(app.workDir), { timeout: 60_000 }).toEqual([]);
  } finally {
    await app.stop();
    await rm(compositions, { recursive: true, force: true });
  }
});
