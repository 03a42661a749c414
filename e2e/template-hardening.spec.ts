// templates/preview-render as it would face the internet: a server listening beyond loopback
// refuses to start without RENDER_API_TOKEN, POST /api/render then needs the token, a render's
// page cannot reach addresses beyond its files (here a server on 127.0.0.1 standing in for cloud
// metadata or an admin port), and image variables must name a file of the composition or an
// allowed origin. The preview page and the composition files stay public; the page asks for the
// token and renders with it. Two tiny renders.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "./fixtures";
import { call, startTemplate, type TemplateApp, waitForResult } from "./template-app";

const TOKEN = "test-token-0123456789abcdef0123456789";
/** A 1x1 PNG. */
const PIXEL = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

test("listening beyond loopback without a token, the template refuses to start and names the variable", async () => {
  await expect(startTemplate({ HOST: "0.0.0.0" })).rejects.toThrow(
    /exited with 2 before listening:[^]*HOST=0\.0\.0\.0 [^]*set RENDER_API_TOKEN[^]*ALLOW_ANONYMOUS_RENDERS=1/,
  );
  await expect(startTemplate({ HOST: "0.0.0.0", RENDER_API_TOKEN: "short" })).rejects.toThrow(
    /RENDER_API_TOKEN must be at least 24 characters/,
  );
  await expect(startTemplate({ ALLOWED_ORIGINS: "https://cdn.example.com/path" })).rejects.toThrow(
    /ALLOWED_ORIGINS must list origins like https:\/\/cdn\.example\.com/,
  );
  const open = await startTemplate({ HOST: "0.0.0.0", ALLOW_ANONYMOUS_RENDERS: "1" });
  try {
    expect(open.logs()).toContain("POST /api/render is open to anyone who can reach the server");
  } finally {
    await open.stop();
  }
});

test.describe("with a token on 0.0.0.0", () => {
  let app: TemplateApp;
  let compositions: string;
  let internal: Server;
  let internalHits = 0;
  let internalUrl: string;

  test.beforeAll(async () => {
    // Stands in for what a public render must never reach: metadata, admin ports.
    internal = createServer((_request, response) => {
      internalHits++;
      response.end("internal secret");
    });
    await new Promise<void>((resolve) => internal.listen(0, "127.0.0.1", resolve));
    internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/`;

    compositions = await mkdtemp(join(tmpdir(), "svc-template-hardening-"));
    await mkdir(join(compositions, "probe", "images"), { recursive: true });
    await writeFile(join(compositions, "probe", "images", "logo.png"), PIXEL);
    await writeFile(join(compositions, "secret.png"), PIXEL);
    await writeFile(
      join(compositions, "probe", "index.html"),
      `<!doctype html>
<html data-composition-variables='[{"id": "logo", "type": "image", "label": "Logo", "default": "images/logo.png"}]'>
<body style="margin:0;background:#204">
<div data-composition-id="probe" data-width="160" data-height="90" data-duration="1">
  <img data-var-src="logo" src="images/logo.png" width="40" height="40">
</div>
<script>
  fetch(${JSON.stringify(internalUrl)}).catch(() => undefined);
  window.__timelines = { probe: { duration: () => 1, time: () => 0, seek() {}, pause() {} } };
</script>
</body></html>`,
    );
    app = await startTemplate({
      HOST: "0.0.0.0",
      RENDER_API_TOKEN: TOKEN,
      COMPOSITIONS_DIR: compositions,
      ALLOWED_ORIGINS: "https://cdn.example.com",
    });
  });
  test.afterAll(async () => {
    await app?.stop();
    await new Promise((resolve) => internal?.close(resolve));
    await rm(compositions, { recursive: true, force: true });
  });

  test("a render request needs the token; the preview page and composition files stay public", async () => {
    expect(app.logs()).toContain("POST /api/render needs RENDER_API_TOKEN");
    const missing = await call(app, "POST", "/api/render", { fps: 2 });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe("authentication_required");
    expect(missing.body.error.message).toContain("RENDER_API_TOKEN");
    const wrong = await call(
      app,
      "POST",
      "/api/render",
      { fps: 2 },
      {
        authorization: `Bearer ${TOKEN.replace(/.$/, "x")}`,
      },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("invalid_token");

    expect((await call(app, "GET", "/")).status).toBe(200);
    expect((await call(app, "GET", "/compositions/probe/index.html")).status).toBe(200);
    const listed = await call(app, "GET", "/api/compositions");
    expect(listed.body).toMatchObject({ compositions: ["probe"], render_token_required: true });
  });

  test("an image variable that is not a file of the composition or on an allowed origin is refused with its code", async () => {
    for (const logo of [
      "http://169.254.169.254/latest/meta-data/",
      internalUrl,
      "https://cdn.example.com.evil.test/logo.png",
      "//cdn.example.org/logo.png",
      "file:///etc/passwd",
      "../secret.png",
      "images/%2e%2e/%2e%2e/secret.png",
      "images/missing.png",
    ]) {
      const answer = await call(
        app,
        "POST",
        "/api/render",
        { variables: { logo } },
        {
          authorization: `Bearer ${TOKEN}`,
        },
      );
      expect({ logo, status: answer.status, code: answer.body.error?.code }).toEqual({
        logo,
        status: 422,
        code: "image_not_allowed",
      });
      expect(answer.body.error.issues).toEqual([expect.objectContaining({ id: "logo" })]);
    }
    expect(internalHits).toBe(0);
  });

  test("with the token a render works; the page's request to 127.0.0.1 is blocked with a warning", async () => {
    const posted = await call(
      app,
      "POST",
      "/api/render",
      { fps: 2, quality: "draft", variables: { logo: "images/logo.png" } },
      { authorization: `Bearer ${TOKEN}` },
    );
    expect(posted.status).toBe(202);
    const { answer } = await waitForResult(app, posted.body.call_id);
    expect(answer.body).toMatchObject({ status: "done" });
    expect(answer.body.warnings).toEqual(
      expect.arrayContaining([expect.stringContaining(internalUrl)]),
    );
    expect(internalHits).toBe(0);
    expect(app.logs()).toContain(internalUrl);
  });

  test("the preview page asks for the token, says why a render without it is refused, and renders with it", async ({
    page,
  }) => {
    await page.goto(`${app.url}/`);
    const token = page.getByLabel("Access token (RENDER_API_TOKEN)");
    await expect(token).toBeVisible();
    const render = page.getByRole("button", { name: "Render" });
    await expect(render).toBeEnabled();
    await page.locator('input[name="fps"]').fill("2");
    await page.locator('select[name="quality"]').selectOption("draft");
    await render.click();
    await expect(page.locator("#status-text")).toContainText("(authentication_required)");
    await token.fill(TOKEN);
    await render.click();
    await expect(page.locator("#status-text")).toHaveText("Done.", { timeout: 90_000 });
  });
});

test.describe("the preview page's answers", () => {
  let app: TemplateApp;
  let compositions: string;

  test.beforeAll(async () => {
    compositions = await mkdtemp(join(tmpdir(), "svc-template-libs-"));
    await mkdir(join(compositions, "titles"), { recursive: true });
    await writeFile(
      join(compositions, "titles", "index.html"),
      `<!doctype html>
<html><body>
<div data-composition-id="titles" data-width="160" data-height="90" data-duration="1"></div>
<script src="https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js"></script>
</body></html>`,
    );
    app = await startTemplate({ COMPOSITIONS_DIR: compositions });
  });
  test.afterAll(async () => {
    await app?.stop();
    await rm(compositions, { recursive: true, force: true });
  });

  test("may not be framed by another site: CSP frame-ancestors 'none' and X-Frame-Options DENY", async () => {
    for (const path of ["/", "/app.js", "/api/compositions", "/compositions/titles/index.html"]) {
      const answer = await call(app, "GET", path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("content-security-policy"), path).toContain(
        "frame-ancestors 'none'",
      );
      expect(answer.headers.get("x-frame-options"), path).toBe("DENY");
      expect(answer.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
  });

  test("/libs/cdn/ answers the library files the compositions load, and refuses manifests, sources, maps and other packages", async () => {
    const cdn = "/libs/cdn/cdn.jsdelivr.net/npm";
    // What the page names, and another file of the same package and version (a GSAP plugin).
    for (const path of [
      `${cdn}/gsap@3.15.0/dist/gsap.min.js`,
      `${cdn}/gsap@3.15.0/dist/ScrollTrigger.min.js`,
    ]) {
      const answer = await call(app, "GET", path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("content-type"), path).toMatch(/javascript/);
    }
    for (const path of [
      `${cdn}/gsap@3.15.0/package.json`,
      `${cdn}/gsap@3.15.0/dist/gsap.min.js.map`,
      `${cdn}/gsap@3.15.0/types/index.d.ts`,
      `${cdn}/gsap@3.15.0/src/index.ts`,
      `${cdn}/fastify@5/fastify.js`,
      `${cdn}/fastify@5/package.json`,
      "/libs/cdn/unpkg.com/pino@9/pino.js",
      "/libs/cdn/cdnjs.cloudflare.com/ajax/libs/d3/7.9.0/d3.min.js",
    ]) {
      const answer = await call(app, "GET", path);
      expect({ path, status: answer.status }).toEqual({ path, status: 404 });
      expect(answer.body.error.message).toContain("the library files its compositions load");
    }
  });
});
