import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";

/** Runs the real `svc` binary and returns its exit code and output. */
function svc(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["bin/svc.js", ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("svc doctor", () => {
  it("reports the browser, FFmpeg with its encoders and ffprobe as JSON", async () => {
    const { code, stdout } = await svc(["doctor", "--json"], { SVC_BROWSER_NAMESPACE: "" });
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({
      ok: true,
      browser: { ok: true, path: expect.any(String), version: expect.stringMatching(/\d+\.\d+/) },
      ffmpeg: { ok: true, path: expect.any(String), version: expect.any(String) },
      ffprobe: { ok: true, path: expect.any(String), version: expect.any(String) },
    });
    expect(typeof report.browser.headless_shell).toBe("boolean");
    expect(report.browser.reason).toEqual(expect.any(String));
    // The bundled static FFmpeg is taken over the system one on PATH because it is faster.
    expect(report.ffmpeg).toMatchObject({
      source: "bundled",
      reason: expect.stringContaining("starts in milliseconds"),
    });
    // Service renders' browsers: closed by a namespace by default (this machine and CI allow
    // user namespaces; as root the browser runs as nobody), with Chromium's sandbox on, and
    // doctor says so and how to turn it off.
    expect(report.service_renders).toMatchObject({ network: "namespace", sandbox: true });
    expect(report.service_renders.sandbox_reason).toMatch(/sandbox is on: .*SVC_BROWSER_SANDBOX=0/);
    if (process.getuid?.() === 0) expect(report.service_renders.uid).toBe(65534);
    // Customers' media are decoded by a maintained FFmpeg: Debian's (5.1 on bookworm, a
    // supported release line), not the 2018 static build (N-47683).
    expect(report.media_ffmpeg).toMatchObject({
      ok: true,
      source: "path",
      version: expect.stringMatching(/^(5\.1|[6-9])\.\d/),
    });
    expect(report.ffmpeg.encoders.map((e: { name: string }) => e.name)).toEqual([
      "libx264",
      "libvpx-vp9",
      "prores_ks",
      "aac",
      "libopus",
    ]);
    expect(report.ffmpeg.encoders.every((e: { present: boolean }) => e.present)).toBe(true);
    expect(code).toBe(0);
  });

  it("says ffmpeg is missing, how to fix it, and exits 1", async () => {
    const { code, stdout } = await svc(["doctor", "--json"], { SVC_FFMPEG_PATH: "/nonexistent" });
    const report = JSON.parse(stdout);
    expect(report.ok).toBe(false);
    expect(report.ffmpeg).toMatchObject({
      ok: false,
      problem: expect.stringContaining("/nonexistent"),
      hint: expect.stringContaining("SVC_FFMPEG_PATH"),
    });
    expect(report.ffprobe.ok).toBe(true);
    expect(code).toBe(1);
  });

  it("prints aligned check lines for people", async () => {
    const { code, stdout } = await svc(["doctor"], { SVC_FFMPEG_PATH: "/nonexistent" });
    expect(stdout).toMatch(/^✓ browser {6}\S/m);
    expect(stdout).toMatch(/^✗ ffmpeg {7}not found$/m);
    expect(stdout).toContain("fix: Fix the path in SVC_FFMPEG_PATH");
    expect(stdout).toContain("Not ready");
    expect(code).toBe(1);
  });

  it("says which browser and FFmpeg it uses and why", async () => {
    const { stdout } = await svc(["doctor"]);
    expect(stdout).toMatch(
      /^✓ ffmpeg .*\(bundled\)\n {15}\S+\n {15}why: the static build that ships with svc/m,
    );
    expect(stdout).toMatch(/^✓ browser .*\n {15}\S+\n {15}why: \S/m);
  });
});
