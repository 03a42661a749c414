// Faults between the client and the real service: a proxy drops the connection once at each
// step of `svc cloud render` (after the service did the work, so only idempotency keeps it from
// happening twice), and Ctrl+C at each long stage. Every run must still end with the video, and
// the service must hold exactly one asset, one render and one charge per run.
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeMedia } from "../../engine/testing/probe";
import { startService, type ServiceProcess } from "../../server/testing/service-process";
import { ApiClient } from "../../core/api-client";
import { downloadRender } from "../../core/download";
import {
  runCli,
  serviceCounts,
  startCli,
  startFaultProxy,
  tempDir,
  tinyComposition,
  writeProject,
  type FaultProxy,
  type FaultStep,
} from "../testing/cloud-service";
import { waitFor } from "../../shared/testing/wait-for";

const FAST = ["--fps", "2", "--quality", "draft", "--poll-interval", "1"];

let service: ServiceProcess;
let proxy: FaultProxy;
let work: string;
let env: Record<string, string>;

beforeAll(async () => {
  work = await tempDir();
  proxy = await startFaultProxy();
  service = await startService({
    dataDir: join(work, "data"),
    jobs: 1,
    // Signed upload/download URLs point at the proxy too, so PUT and download pass through it.
    env: { SVC_SERVER_PUBLIC_URL: proxy.url, SVC_SERVER_DOWNLOAD_URL_TTL_SECONDS: "3" },
  });
  proxy.setUpstream(service.url);
  env = { HOME: join(work, "home"), SVC_API_URL: proxy.url, SVC_API_KEY: service.apiKey };
});

afterAll(async () => {
  await service?.kill();
  await proxy?.close();
});

async function newRun(name: string) {
  const project = await writeProject(join(work, `${name}-project`), {
    "index.html": tinyComposition(`run ${name}`),
  });
  const cwd = join(work, `${name}-cwd`);
  const tmp = join(work, `${name}-tmp`);
  await mkdir(cwd, { recursive: true });
  await mkdir(tmp, { recursive: true });
  return { project, cwd, tmp, env: { ...env, TMPDIR: tmp } };
}

/** Temp archives left in a TMPDIR (tsx keeps its own cache there too). */
async function zipsIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith("svc-archive-"));
}

async function expectMp4(file: string) {
  const info = await probeMedia(file);
  expect(info.streams.find((s) => s.type === "video")).toMatchObject({ codec: "h264" });
}

describe("a dropped connection at each step", () => {
  const steps: FaultStep[] = ["create", "put", "complete", "submit", "poll", "download"];
  for (const step of steps) {
    it(`still ends with the video and one asset, render and charge when ${step} is dropped`, async () => {
      const run = await newRun(`drop-${step}`);
      const before = await serviceCounts(service.dataDir);
      const seenBefore = proxy.seen[step] ?? 0;
      proxy.arm(step, "drop");
      const result = await runCli(["cloud", "render", run.project, "--json", ...FAST], run);
      expect(result.code, result.stderr).toBe(0);
      expect(proxy.injected[step]).toBe(1);
      // The dropped request and at least one repeat of it reached the proxy.
      expect((proxy.seen[step] ?? 0) - seenBefore).toBeGreaterThanOrEqual(2);
      if (step === "download") expect(proxy.rangeRequests).toBeGreaterThanOrEqual(1);
      const body = JSON.parse(result.stdout);
      await expectMp4(body.output);
      expect(await readdir(join(run.cwd, "renders"))).toEqual([`${body.render_id}.mp4`]);
      expect(await zipsIn(run.tmp)).toEqual([]);
      const after = await serviceCounts(service.dataDir);
      expect({
        assets: after.assets - before.assets,
        renders: after.renders - before.renders,
        credits: after.creditsUsed - before.creditsUsed,
      }).toEqual({ assets: 1, renders: 1, credits: 1 });
    });
  }
});

describe("an expired signed URL", () => {
  it("is replaced by a fresh one from the render record", async () => {
    const client = new ApiClient({ baseUrl: proxy.url, credential: service.apiKey });
    const [stale] = (await client.listRenders({ limit: 1 })).data;
    expect(stale?.video_url).toBeTruthy();
    await waitFor("the signed URL to expire", async () => {
      const response = await fetch(stale!.video_url!);
      await response.arrayBuffer();
      return response.status === 403 ? true : undefined;
    });
    const output = join(work, "expired", "video.mp4");
    const result = await downloadRender(client, stale!, output);
    expect(result.sizeBytes).toBeGreaterThan(1000);
    await expectMp4(output);
  });
});

describe("Ctrl+C", () => {
  async function interrupt(
    run: Awaited<ReturnType<typeof newRun>>,
    ready: (stderr: string) => boolean,
    extraFlags: string[] = [],
  ) {
    const cli = startCli(["cloud", "render", run.project, ...FAST, ...extraFlags], run);
    await waitFor("the stage to start", () => (ready(cli.stderr()) ? true : undefined));
    const sent = Date.now();
    cli.child.kill("SIGINT");
    const code = await cli.exited;
    return { code, stderr: cli.stderr(), elapsedMs: Date.now() - sent };
  }

  async function filesUnder(dir: string): Promise<string[]> {
    return readdir(dir, { recursive: true }).catch(() => []);
  }

  it("during upload stops at once and leaves no files", async () => {
    const run = await newRun("sigint-upload");
    proxy.arm("put", "stall");
    const result = await interrupt(run, () => proxy.stalled() > 0);
    expect(result.code).toBe(1);
    expect(result.elapsedMs).toBeLessThan(5000);
    expect(result.stderr).toContain(
      "error: Interrupted.\nhint: Nothing was submitted; run the command again.\n",
    );
    expect(await filesUnder(run.cwd)).toEqual([]);
    expect(await zipsIn(run.tmp)).toEqual([]);
  });

  it("during polling stops at once; `svc cloud download ID` finishes the download", async () => {
    const run = await newRun("sigint-poll");
    const result = await interrupt(run, (stderr) => stderr.includes("Rendering…"));
    expect(result.code).toBe(1);
    expect(result.elapsedMs).toBeLessThan(5000);
    const renderId = /svc cloud download (rndr_\w+)/.exec(result.stderr)?.[1];
    expect(renderId, result.stderr).toBeDefined();
    expect(await filesUnder(run.cwd)).toEqual([]);
    const resumed = await runCli(["cloud", "download", renderId!, "--poll-interval", "1"], run);
    expect(resumed.code, resumed.stderr).toBe(0);
    await expectMp4(join(run.cwd, "renders", `${renderId}.mp4`));
  });

  it("with --cancel-on-interrupt cancels the render on the service; `svc cloud cancel` agrees", async () => {
    const run = await newRun("sigint-cancel");
    const project = await writeProject(join(work, "sigint-cancel-long"), {
      "index.html": tinyComposition("long run", { seconds: 60 }),
    });
    const before = (await serviceCounts(service.dataDir)).creditsUsed;
    const cli = startCli(["cloud", "render", project, ...FAST, "--cancel-on-interrupt"], run);
    await waitFor("rendering", () => (cli.stderr().includes("Rendering…") ? true : undefined));
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(1);
    const renderId = /The render (rndr_\w+) was cancelled on the service/.exec(cli.stderr())?.[1];
    expect(renderId, cli.stderr()).toBeDefined();
    const shown = await runCli(["cloud", "get", renderId!, "--json"], run);
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: "failed", failure_code: "cancelled" });
    const again = await runCli(["cloud", "cancel", renderId!], run);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`Cancelled ${renderId}; nothing was charged.\n`);
    expect((await serviceCounts(service.dataDir)).creditsUsed).toBe(before);
  });

  it("without the flag says how to cancel; `svc cloud cancel` refuses a completed render", async () => {
    const run = await newRun("sigint-hint");
    const result = await interrupt(run, (stderr) => stderr.includes("Rendering…"));
    const renderId = /svc cloud cancel (rndr_\w+)/.exec(result.stderr)?.[1];
    expect(renderId, result.stderr).toBeDefined();
    const [completed] = (
      await new ApiClient({ baseUrl: proxy.url, credential: service.apiKey }).listRenders({})
    ).data.filter((record) => record.status === "completed");
    const refused = await runCli(["cloud", "cancel", completed!.render_id], run);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("already completed");
    expect(refused.stderr).toContain("hint: `svc cloud get <id>` shows how it ended.");
  });

  it("during download removes the partial file; `svc cloud download ID` finishes the download", async () => {
    const run = await newRun("sigint-download");
    proxy.arm("download", "stall");
    const result = await interrupt(run, () => proxy.stalled() > 0);
    expect(result.code).toBe(1);
    expect(result.elapsedMs).toBeLessThan(5000);
    const renderId = /svc cloud download (rndr_\w+)/.exec(result.stderr)?.[1];
    expect(renderId, result.stderr).toBeDefined();
    expect(await filesUnder(join(run.cwd, "renders"))).toEqual([]);
    const resumed = await runCli(["cloud", "download", renderId!], run);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await filesUnder(join(run.cwd, "renders"))).toEqual([`${renderId}.mp4`]);
    await expectMp4(join(run.cwd, "renders", `${renderId}.mp4`));
  });
});
