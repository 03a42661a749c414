// The images build from this checkout with podman, never pulling (the bases are the local
// stand-ins of deploy/container/stand-in-base.sh), and run as built: the service image is
// non-root, has its health check, carries production dependencies only and passes `svc doctor`
// with a read-only root and no capabilities; the template's image, built the same way, serves
// /healthz. Sizes are printed; the service image stays within 700 MB of compressed layers.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { waitFor } from "../../src/shared/testing/wait-for";
import {
  buildAllImages,
  compressedSizes,
  imageLayers,
  IMAGES,
  podman,
  podmanUnavailable,
  tryRun,
  unpackedSize,
} from "./podman";

const inCi = !/^(|0|false|no|off)$/i.test((process.env.CI ?? "").trim());
const unavailable = podmanUnavailable();
if (unavailable && !inCi) console.warn(`container image tests skipped: ${unavailable}`);
const MB = 1024 * 1024;
const TEMPLATE_CONTAINER = "svc-template-image-test";

describe.skipIf(unavailable !== undefined && !inCi)("the container images", () => {
  beforeAll(async () => {
    if (unavailable) throw new Error(`the image tests cannot run in CI: ${unavailable}`);
    // Built once for both files by images-global-setup.ts; by this file under another config.
    let built = inject("containerImages");
    if (!built) {
      const started = Date.now();
      const seconds = await buildAllImages();
      const load = (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ");
      built = { seconds, total: Math.round((Date.now() - started) / 1000), load };
    }
    const each = Object.entries(built.seconds).map(([name, s]) => `${name} ${s} s`);
    process.stderr.write(
      `images: built in ${built.total} s (${each.join(", ")}; load ${built.load})\n`,
    );
  }, 2_400_000);

  afterAll(async () => {
    await tryRun("podman", ["rm", "-f", "--time", "0", TEMPLATE_CONTAINER]);
  });

  it(
    "the service image: at most 700 MB of compressed layers (sizes printed)",
    { timeout: 600_000 },
    async () => {
      // Compressing takes a minute here: the dev store's images (test stand-ins, never shipped)
      // are given unpacked only.
      const compressedOf = await compressedSizes([IMAGES.service, IMAGES.template]);
      for (const [name, tag] of Object.entries(IMAGES)) {
        const compressed = compressedOf[tag];
        const unpacked = await unpackedSize(tag);
        process.stderr.write(
          `images: ${name} (${tag}) ${compressed === undefined ? "" : `at most ${(compressed / MB).toFixed(0)} MB compressed (gzip level 1), `}${(unpacked / MB).toFixed(0)} MB unpacked\n`,
        );
        if (name === "service") expect(compressed).toBeLessThanOrEqual(700 * MB);
      }
    },
  );

  it("the template's image is the service's image's layers plus the template's", async () => {
    const [service, template] = await Promise.all([
      imageLayers(IMAGES.service),
      imageLayers(IMAGES.template),
    ]);
    // All but the service's last layer (its data dir and `svc` link): the base, Debian's
    // packages and svc's node_modules and sources, stored once.
    const shared = service.slice(0, -1);
    expect(shared.length).toBeGreaterThan(2);
    expect(template.slice(0, shared.length)).toEqual(shared);
  });

  it("runs as uid 1000 under tini with a health check, and holds production dependencies only", async () => {
    const [image] = JSON.parse(await podman(["image", "inspect", IMAGES.service]));
    const config = image.Config;
    expect(config.User).toBe("1000:1000");
    expect(config.Entrypoint.slice(0, 2)).toEqual(["/usr/bin/tini", "--"]);
    // Podman shows a Docker-format image's health check beside its config.
    const healthcheck = image.Healthcheck ?? config.Healthcheck;
    expect(String(healthcheck?.Test)).toContain("/healthz");
    const modules = await podman([
      "run",
      "--rm",
      "--entrypoint",
      "ls",
      IMAGES.service,
      "/srv/svc/node_modules",
    ]);
    const names = modules.split("\n");
    expect(names).toContain("pg-boss");
    // react is still there: the desktop UI's @tanstack/react-query and zustand are listed under
    // "dependencies" and bring it as a peer (moving them to devDependencies would drop it).
    for (const dev of ["electron", "vite", "typescript", "vitest", "playwright-core"]) {
      expect(names).not.toContain(dev);
    }
    // npm ci --omit=dev may leave the scope's folder of a dev-only package, empty.
    const playwright = await podman([
      "run",
      "--rm",
      "--entrypoint",
      "sh",
      IMAGES.service,
      "-c",
      "ls -A /srv/svc/node_modules/@playwright 2>/dev/null || true",
    ]);
    expect(playwright.trim()).toBe("");
  });

  it("passes `svc doctor` with Debian's Chromium and FFmpeg, read-only, no capabilities", async () => {
    // `svc doctor` as a pod runs it: read-only root, no privilege escalation, capabilities dropped.
    const doctor = (capabilities: string[]) =>
      podman([
        "run",
        "--rm",
        "--read-only",
        "--tmpfs",
        "/tmp",
        "--cap-drop",
        "ALL",
        ...capabilities,
        "--security-opt",
        "no-new-privileges",
        IMAGES.service,
        "doctor",
      ]);
    const output = await doctor([]);
    expect(output).toContain("/usr/lib/chromium/chromium-headless-shell");
    expect(output).toContain("/usr/bin/ffmpeg");
    expect(output).toMatch(/Ready: svc can render/);
    // With every capability dropped Chromium's sandbox cannot chroot: doctor says it is off and
    // why (a sandboxed browser would not start); with SYS_CHROOT kept, as the worker pods do, on.
    expect(output).toMatch(/page fence .*Chromium sandbox off/);
    expect(output).toContain("SYS_CHROOT");
    const withChroot = await doctor(["--cap-add", "SYS_CHROOT"]);
    expect(withChroot).toMatch(/page fence .*Chromium sandbox on/);
  });

  it(
    "the template's image, built the same way, serves /healthz",
    { timeout: 180_000 },
    async () => {
      await tryRun("podman", ["rm", "-f", "--time", "0", TEMPLATE_CONTAINER]);
      await podman([
        "run",
        "-d",
        "--name",
        TEMPLATE_CONTAINER,
        "-e",
        "RENDER_API_TOKEN=test-token-of-the-image-test",
        IMAGES.template,
      ]);
      const address = (
        await podman(["inspect", "--format", "{{.NetworkSettings.IPAddress}}", TEMPLATE_CONTAINER])
      ).trim();
      const status = await waitFor(
        "the template container's /healthz",
        () =>
          fetch(`http://${address}:7740/healthz`).then(
            (response) => response.status,
            () => undefined,
          ),
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      expect(status).toBe(200);
    },
  );
});
