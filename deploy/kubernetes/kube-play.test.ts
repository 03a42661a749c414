// The Kubernetes manifests run for real, with podman: `podman kube play` of the cluster overlay
// (1 api pod, 3 worker pods from the image built from this checkout) beside PostgreSQL and an
// S3-compatible store as pods (deploy/kubernetes/dev-store, images made from Debian packages).
// From the host, `svc cloud render` a composition with audio cut into chunks, then the issue's
// checks: chunks on at least two worker pods; a worker pod SIGKILLed mid-chunk costs only that
// chunk, charged once; workers scaled 3 -> 1 (SIGTERM) mid-render lose no chunk and render none
// twice; KEDA's query on that PostgreSQL gives the replicas the formula says for 0, 1, 7 and 200
// queued chunks. Then the cold start of a new worker pod, for bench/README.md.
//
// What podman 4.3 does not do as a cluster does, and how this test stands in for it: no Services
// or DNS (the settings name the store pods' addresses, as a ClusterIP would be named); every
// containerPort would be published on the host (so ports, and the probes naming them, are left
// out); Secret objects are taken as podman secrets of their data; no KEDA (the test sets the
// worker replicas, and stops pods with SIGTERM as a scale-down does); NetworkPolicy, PDB and
// ScaledObject are not run (the schema test checks them).
import { copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { S3Client, PutObjectCommand } from "@aws-sdk/client-s3";
import pg from "pg";
import PgBoss from "pg-boss";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { probeMedia, frameHashes } from "../../src/engine/testing/probe";
import { renderCostMilli } from "../../src/server/render/credits";
import {
  api,
  runCli,
  tempDir,
  waitForTerminalRender,
} from "../../src/server/testing/service-process";
import { waitFor } from "../../src/shared/testing/wait-for";
import {
  buildAllImages,
  podAddress,
  podman,
  podmanUnavailable,
  REPO,
  tryRun,
} from "../container/podman";
import { find, kedaReplicas, kustomize, workerTrigger, type Manifest } from "./manifests";

const inCi = !/^(|0|false|no|off)$/i.test((process.env.CI ?? "").trim());
const unavailable = podmanUnavailable();
if (unavailable && !inCi) console.warn(`kube play test skipped: ${unavailable}`);

const TONE = resolve(REPO, "examples/with-audio/tone.wav");
const LABEL = "app.kubernetes.io/part-of=svc";
// 24 s at 2 fps: 48 frames, segments of 8 frames (4 s), one segment to a chunk: 6 chunks.
const FPS = 2;
const SECONDS = 24;
const COMPOSITION = `<!doctype html>
<html><head><meta charset="utf-8"><style>
  html, body { margin: 0; background: #102030; }
  #box { position: absolute; top: 400px; left: 0; width: 200px; height: 200px;
         animation: slide ${SECONDS}s linear forwards, tint ${SECONDS}s steps(${SECONDS * FPS}) forwards; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(1500px); } }
  @keyframes tint { from { background: #e0a020; } to { background: #20a0e0; } }
</style></head>
<body>
  <div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="${SECONDS}">
    <div id="box"></div>
    <audio src="tone.wav" data-start="0.5"></audio>
  </div>
</body></html>
`;

let work: string;
let project: string;
let db: pg.Client;
let databaseUrl: string;
let service: { url: string; apiKey: string };
let workerManifests: Manifest[];
const cliHome = () => join(work, "home");

function report(line: string): void {
  process.stderr.write(`kube-play: ${line}\n`);
}

interface PodTemplate {
  replicas?: number;
  template: {
    spec: {
      containers: (Record<string, unknown> & { volumeMounts?: { name: string }[] })[];
      volumes?: { name: string }[];
    };
  };
}

/**
 * The objects podman runs, as it can run them (see the top of this file). Podman 4.3 makes an
 * emptyDir a named volume shared by every pod that names it, where Kubernetes gives each pod its
 * own; so each replica becomes a Deployment of its own (NAME-0, NAME-1, ...) with volumes named
 * after it, as a ReplicaSet would make pods with their own emptyDirs.
 */
function forPodman(manifests: Manifest[]): Manifest[] {
  return manifests
    .filter((item) => item.kind === "Deployment" || item.kind === "ConfigMap")
    .flatMap((item) => {
      if (item.kind !== "Deployment") return [item];
      const replicas = (item.spec as PodTemplate).replicas ?? 1;
      return Array.from({ length: replicas }, (_, index) => {
        const name = `${item.metadata.name}-${index}`;
        const copy = structuredClone(item) as Manifest & { spec: PodTemplate };
        copy.metadata.name = name;
        copy.spec.replicas = 1;
        const pod = copy.spec.template.spec;
        for (const container of pod.containers) {
          for (const field of ["ports", "readinessProbe", "livenessProbe", "startupProbe"]) {
            delete container[field];
          }
          for (const mount of container.volumeMounts ?? []) mount.name = `${name}-${mount.name}`;
        }
        for (const volume of pod.volumes ?? []) volume.name = `${name}-${volume.name}`;
        return copy;
      });
    });
}

/** A Secret as podman 4.3 reads secretKeyRef / secretRef: a podman secret of its data as JSON. */
async function createSecret(name: string, values: Record<string, string>): Promise<void> {
  await tryRun("podman", ["secret", "rm", name]);
  const data = Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, Buffer.from(value).toString("base64")]),
  );
  // From a file (mode 0600, removed at once): podman reads `-` only from a FIFO.
  const file = join(work, `${name}.json`);
  await writeFile(file, JSON.stringify(data), { mode: 0o600 });
  try {
    await podman(["secret", "create", name, file]);
  } finally {
    await rm(file, { force: true });
  }
}

async function play(manifests: Manifest[], file: string): Promise<void> {
  await writeFile(join(work, file), manifests.map((item) => stringify(item)).join("---\n"));
  await podman(["kube", "play", join(work, file)]);
}

async function removeSvcPods(): Promise<void> {
  const pods = (await podman(["pod", "ps", "-q", "--filter", `label=${LABEL}`])).trim();
  if (pods) await removePods(pods.split("\n"));
  // Their emptyDirs (named volumes under podman, see forPodman).
  const volumes = (await podman(["volume", "ls", "--format", "{{.Name}}"]))
    .split("\n")
    .filter((name) => name.startsWith("svc-"));
  if (volumes.length > 0) await podman(["volume", "rm", "-f", ...volumes]);
}

/** Killed first: `pod rm -f` alone would wait out each pod's grace period. */
async function removePods(pods: string[]): Promise<void> {
  await tryRun("podman", [
    "--runtime",
    "runc",
    "--cgroup-manager",
    "cgroupfs",
    "pod",
    "kill",
    ...pods,
  ]);
  await podman(["pod", "rm", "-f", ...pods]);
}

/** JSON log lines of a pod's one container (podman keeps a stopped container's log). */
async function podLog(pod: string, container: string): Promise<Record<string, unknown>[]> {
  const text = await podman(["logs", `${pod}-${container}`], { withStderr: true }).catch(() => "");
  return text.split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The worker Deployment with one replica, and its settings. */
function oneWorker(): Manifest[] {
  return workerManifests.map((item) =>
    item.kind === "Deployment"
      ? { ...item, spec: { ...(item.spec as object), replicas: 1 } }
      : item,
  );
}

/**
 * A new pod in place of a killed worker pod, with new emptyDirs, as a ReplicaSet makes one (under
 * the old name, so the test's list of pods stays the same). Restarting the killed pod instead
 * raced podman 4.3's clean-up of the kill, which stopped the restarted pod a second later.
 */
async function replaceWorkerPod(pod: string): Promise<void> {
  await removePods([pod]);
  const name = pod.replace(/-pod-0$/, "");
  const volumes = (await podman(["volume", "ls", "--format", "{{.Name}}"]))
    .split("\n")
    .filter((volume) => volume.startsWith(`${name}-`));
  if (volumes.length > 0) await podman(["volume", "rm", "-f", ...volumes]);
  const replacement = forPodman(oneWorker()).map(
    (item) => JSON.parse(JSON.stringify(item).replaceAll("svc-worker-0", name)) as Manifest,
  );
  await play(replacement, `${name}.yaml`);
}

async function workerPods(): Promise<string[]> {
  const names = await podman(["pod", "ps", "--format", "{{.Name}}", "--filter", `label=${LABEL}`]);
  return names
    .split("\n")
    .filter((name) => /^svc-worker-\d+-pod-0$/.test(name))
    .sort();
}

/** Every worker pod's lines of `message` for one render (stopped and killed pods included). */
async function chunkLines(renderId: string, message: string): Promise<Record<string, unknown>[]> {
  const lines = await Promise.all((await workerPods()).map((pod) => podLog(pod, "worker")));
  return lines.flat().filter((line) => line.renderId === renderId && line.msg === message);
}

interface ChunkRow {
  idx: number;
  worker: string | null;
  attempts: number;
  state: string;
  frames_done: number;
}

async function chunkRows(renderId: string): Promise<ChunkRow[]> {
  const result = await db.query<ChunkRow>(
    "select idx, worker, attempts, state, frames_done from render_chunks where render_id = $1 order by idx",
    [renderId],
  );
  return result.rows;
}

/**
 * Chunks of a render being rendered now, with the pod rendering each: a row in "rendering" with
 * frames done, whose pod logged "chunk started" for it and no "chunk finished" yet (the row names
 * its worker only once the chunk is done).
 */
async function runningChunks(renderId: string): Promise<{ idx: number; pod: string }[]> {
  const pods = await workerPods();
  const running: { idx: number; pod: string }[] = [];
  const rows = (await chunkRows(renderId)).filter(
    (row) => row.state === "rendering" && row.frames_done > 0,
  );
  for (const pod of pods) {
    const lines = (await podLog(pod, "worker")).filter((line) => line.renderId === renderId);
    const started = lines.filter((line) => line.msg === "chunk started").map((l) => l.chunk);
    const finished = lines.filter((line) => line.msg === "chunk finished").map((l) => l.chunk);
    for (const row of rows) {
      if (started.includes(row.idx) && !finished.includes(row.idx))
        running.push({ idx: row.idx, pod });
    }
  }
  return running;
}

async function credits(): Promise<{ remaining: number; used: number }> {
  const me = await api(service, "GET", "/v3/users/me", { key: service.apiKey });
  expect(me.status).toBe(200);
  const { credits_remaining: remaining, credits_used: used } = me.body.data.billing;
  return { remaining, used };
}

/** `svc cloud render` from the host, as a customer runs it. */
async function cloudRender(args: string[]): Promise<Record<string, unknown>> {
  const result = await runCli(
    ["cloud", "render", project, "--fps", String(FPS), "--quality", "draft", "--json", ...args],
    { HOME: cliHome(), SVC_API_URL: service.url, SVC_API_KEY: service.apiKey },
  );
  expect(result.stderr).not.toMatch(/error:/);
  expect(result.code, `svc cloud render said:\n${result.stdout}\n${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function submit(): Promise<string> {
  const submitted = await cloudRender(["--no-wait"]);
  return submitted.render_id as string;
}

describe.skipIf(unavailable !== undefined && !inCi)(
  "svc on Kubernetes, run by podman kube play",
  () => {
    beforeAll(async () => {
      if (unavailable) throw new Error(`the kube play test cannot run in CI: ${unavailable}`);
      // Built once for both files by images-global-setup.ts; by this file under another config.
      if (!inject("containerImages")) {
        const started = Date.now();
        await buildAllImages();
        report(`images ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }
      const started = Date.now();
      work = await tempDir("svc-kube-play-");
      project = join(work, "project");
      await mkdir(project);
      await mkdir(cliHome());
      await writeFile(join(project, "index.html"), COMPOSITION);
      await copyFile(TONE, join(project, "tone.wav"));
      await removeSvcPods();

      // docs/deploy.md, "Kubernetes": the store's secret, the store, then svc's secret and settings.
      const storeSecret = {
        POSTGRES_PASSWORD: "pw-" + Math.random().toString(36).slice(2),
        AWS_ACCESS_KEY_ID: "svc:svc",
        AWS_SECRET_ACCESS_KEY: "key-" + Math.random().toString(36).slice(2),
      };
      await createSecret("svc-dev-store", storeSecret);
      await play(forPodman(await kustomize("dev-store")), "dev-store.yaml");
      const [postgresAt, s3At] = await Promise.all([
        podAddress("svc-postgres-0-pod-0"),
        podAddress("svc-s3-store-0-pod-0"),
      ]);
      databaseUrl = `postgres://svc:${storeSecret.POSTGRES_PASSWORD}@${postgresAt}:5432/svc`;
      const endpoint = `http://${s3At}:8080`;
      db = await waitFor(
        "PostgreSQL in its pod",
        async () => {
          const client = new pg.Client({ connectionString: databaseUrl });
          try {
            await client.connect();
            return client;
          } catch {
            await client.end().catch(() => undefined);
            return undefined;
          }
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      const s3 = new S3Client({
        endpoint,
        region: "us-east-1",
        forcePathStyle: true,
        credentials: {
          accessKeyId: storeSecret.AWS_ACCESS_KEY_ID,
          secretAccessKey: storeSecret.AWS_SECRET_ACCESS_KEY,
        },
        maxAttempts: 1,
      });
      await waitFor(
        "the S3 store in its pod",
        () =>
          s3
            .send(new PutObjectCommand({ Bucket: "svc-renders", Key: "probe", Body: "ready" }))
            .then(
              () => true,
              () => undefined,
            ),
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      s3.destroy();

      await createSecret("svc-secrets", {
        SVC_DATABASE_URL: databaseUrl,
        AWS_ACCESS_KEY_ID: storeSecret.AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY: storeSecret.AWS_SECRET_ACCESS_KEY,
      });
      // The operator's overlay on the cluster one: where the bucket is, and (for this test) short
      // leases so a killed pod's chunk comes back in seconds, 4 s chunks, and 3 workers where KEDA
      // would decide.
      const overlay = join(work, "overlay");
      await mkdir(overlay);
      await writeFile(
        join(overlay, "kustomization.yaml"),
        stringify({
          apiVersion: "kustomize.config.k8s.io/v1beta1",
          kind: "Kustomization",
          // Relative: kustomize 2.0 (kubectl 1.20) refuses an absolute base.
          bases: [relative(overlay, resolve(REPO, "deploy/kubernetes/overlays/cluster"))],
          patchesStrategicMerge: ["settings.yaml"],
        }),
      );
      await writeFile(
        join(overlay, "settings.yaml"),
        [
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "svc-settings" },
            data: {
              SVC_STORAGE_URL: "s3://svc-renders/kube-play",
              AWS_ENDPOINT_URL: endpoint,
              SVC_SERVER_LEASE_SECONDS: "6",
              SVC_SERVER_CHUNK_SECONDS: "4",
            },
          },
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: "svc-api" },
            spec: { replicas: 1 },
          },
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: "svc-worker" },
            spec: { replicas: 3 },
          },
        ]
          .map((item) => stringify(item))
          .join("---\n"),
      );
      const rendered = await kustomize(overlay);
      workerManifests = [
        find(rendered, "ConfigMap", "svc-settings"),
        find(rendered, "Deployment", "svc-worker"),
      ];
      // Everything at once, as `kubectl apply -k` starts it (docs/deploy.md): the api and the
      // three workers on an empty database, where the first to take the schema lock migrates and
      // the others wait for it (src/server/db/postgres.ts withStartupLock).
      await play(forPodman(rendered), "svc.yaml");
      const apiAt = await podAddress("svc-api-0-pod-0");
      const url = `http://${apiAt}:7733`;
      await waitFor(
        "the api pod to be ready",
        () =>
          fetch(`${url}/readyz`).then(
            (response) => response.ok || undefined,
            () => undefined,
          ),
        { timeoutMs: 180_000, intervalMs: 250 },
      );
      // Each worker announces itself once started (render/worker-presence.ts).
      await waitFor(
        "the three worker pods to start",
        async () => {
          const lines = await Promise.all((await workerPods()).map((pod) => podLog(pod, "worker")));
          const up = lines.filter((log) => log.some((line) => line.msg === "service started"));
          return up.length === 3 || undefined;
        },
        { timeoutMs: 240_000, intervalMs: 500 },
      );
      // An account and its key, made with the image's own CLI in the api pod.
      const exec = (args: string[]) =>
        podman(["exec", "svc-api-0-pod-0-api", "svc", "server", ...args]);
      await exec(["users", "add", "k8s@example.com", "--credits", "1000"]);
      const keyOutput = await exec(["keys", "create", "--user", "k8s@example.com"]);
      const apiKey = /svc_key_\w+/.exec(keyOutput)?.[0];
      if (!apiKey) throw new Error(`no API key in: ${keyOutput}`);
      service = { url, apiKey };
      report(`cluster up in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }, 2_400_000);

    afterAll(async () => {
      await db?.end().catch(() => undefined);
      if (!process.env.SVC_KEEP_PODS) await removeSvcPods().catch(() => undefined);
      if (work) await rm(work, { recursive: true, force: true });
    }, 120_000);

    it(
      "renders a composition with audio in chunks on at least two worker pods, charged once",
      { timeout: 600_000 },
      async () => {
        // Every worker pod fences customers' pages in with a namespace and Chromium's sandbox
        // (the manifests keep SYS_CHROOT for it), as its start-up log says.
        for (const pod of await workerPods()) {
          const fence = (await podLog(pod, "worker")).find((line) => "sandbox" in line);
          expect(fence, pod).toMatchObject({ pageNetwork: "namespace", sandbox: true });
        }
        const before = await credits();
        const output = join(work, "first.mp4");
        const result = await cloudRender(["-o", output]);
        const renderId = result.render_id as string;
        const chunks = await chunkRows(renderId);
        expect(chunks.length).toBeGreaterThanOrEqual(4);
        expect(chunks.every((chunk) => chunk.state === "done" && chunk.attempts === 1)).toBe(true);
        const workers = new Set(chunks.map((chunk) => chunk.worker));
        expect(workers.size).toBeGreaterThanOrEqual(2);
        for (const name of workers) expect(name).toMatch(/^svc-worker-\d-pod-0$/);

        const info = await probeMedia(output);
        expect(info.streams.some((stream) => stream.type === "audio")).toBe(true);
        expect(await frameHashes(output)).toHaveLength(SECONDS * FPS);
        const cost = renderCostMilli(SECONDS, "1080p") / 1000;
        const after = await credits();
        expect(after.used - before.used).toBeCloseTo(cost, 6);
        report(
          `first render: ${chunks.length} chunks on ` +
            [...workers]
              .map((w) => `${w}: ${chunks.filter((c) => c.worker === w).length}`)
              .join(", "),
        );
      },
    );

    it(
      "a worker pod killed mid-chunk: only that chunk runs again, the video is complete, charged once",
      { timeout: 600_000 },
      async () => {
        const before = await credits();
        const renderId = await submit();
        const victim = await waitFor(
          "a chunk being rendered",
          async () => (await runningChunks(renderId))[0],
          { timeoutMs: 300_000, intervalMs: 100 },
        );
        const { pod } = victim;
        await podman(["pod", "kill", "--signal", "KILL", pod]);
        // The Deployment's controller starts a new pod in its place.
        await replaceWorkerPod(pod);

        const record = await waitForTerminalRender(service, renderId, 400_000);
        expect(record).toMatchObject({ status: "completed", duration: SECONDS });
        const chunks = await chunkRows(renderId);
        expect(Object.fromEntries(chunks.map((chunk) => [chunk.idx, chunk.attempts]))).toEqual(
          Object.fromEntries(chunks.map((chunk) => [chunk.idx, chunk.idx === victim.idx ? 2 : 1])),
        );
        const cost = renderCostMilli(SECONDS, "1080p") / 1000;
        expect(record.credits_charged).toBeCloseTo(cost, 6);
        const after = await credits();
        expect(after.used - before.used).toBeCloseTo(cost, 6);
        await waitFor(
          `the pod that replaced ${pod} to start`,
          async () =>
            (await podLog(pod, "worker")).some((line) => line.msg === "service started") ||
            undefined,
          { timeoutMs: 240_000, intervalMs: 500 },
        );
        const video = join(work, "killed.mp4");
        await writeFile(video, Buffer.from(await (await fetch(record.video_url)).arrayBuffer()));
        expect(await frameHashes(video)).toHaveLength(SECONDS * FPS);
        report(
          `SIGKILL of ${pod} during chunk ${victim.idx}: attempts ${chunks.map((c) => `${c.idx}:${c.attempts}@${c.worker}`).join(" ")}`,
        );
      },
    );

    it(
      "workers scaled 3 -> 1 during a render (SIGTERM): the running chunks finish, none is lost or rendered twice",
      { timeout: 900_000 },
      async () => {
        const before = await credits();
        const renderId = await submit();
        const [keep, ...stop] = await workerPods();
        expect(stop).toHaveLength(2);
        await waitFor(
          "a chunk being rendered on a pod that is about to stop",
          async () =>
            (await runningChunks(renderId)).some((chunk) => stop.includes(chunk.pod)) || undefined,
          { timeoutMs: 300_000, intervalMs: 100 },
        );
        // What a scale-down does: the kubelet sends the pod's containers SIGTERM and waits up to
        // the grace period for them to exit; the pod's sandbox (its network) goes only after
        // that. So the worker containers are stopped first: podman 4.3's `pod stop` stops the
        // infra container alongside them, and a draining worker lost its network (its chunk then
        // could neither finish nor be handed back, and ran again elsewhere after the lease).
        const graceSeconds = 330;
        const stoppedAt = Date.now();
        await Promise.all(
          stop.map((pod) => podman(["stop", "--time", String(graceSeconds), `${pod}-worker`])),
        );
        const drainMs = Date.now() - stoppedAt;
        for (const pod of stop) {
          // Exited by itself (0), not killed at the end of the grace period (137).
          const exit = await podman([
            "inspect",
            "--format",
            "{{.State.ExitCode}}",
            `${pod}-worker`,
          ]);
          expect(exit.trim()).toBe("0");
          const said = await podman(["logs", `${pod}-worker`], { withStderr: true });
          expect(said).toContain("svc server stopping (SIGTERM)");
        }
        expect(drainMs).toBeLessThan(graceSeconds * 1000);
        await podman(["pod", "stop", ...stop]);

        const record = await waitForTerminalRender(service, renderId, 600_000);
        expect(record).toMatchObject({ status: "completed", duration: SECONDS });
        const chunks = await chunkRows(renderId);
        // Every chunk done on its first attempt: the chunks running at SIGTERM finished on their
        // stopping pods, and no chunk was handed back or rendered again.
        expect(chunks.map((chunk) => [chunk.idx, chunk.state, chunk.attempts])).toEqual(
          chunks.map((chunk) => [chunk.idx, "done", 1]),
        );
        const started = (await chunkLines(renderId, "chunk started"))
          .filter((line) => line.copy !== true)
          .map((line) => line.chunk);
        expect(started.sort()).toEqual(chunks.map((chunk) => chunk.idx).sort());
        const finished = (await chunkLines(renderId, "chunk finished")).map((line) => line.chunk);
        expect(finished.sort()).toEqual(chunks.map((chunk) => chunk.idx).sort());
        const onStopped = chunks.filter((chunk) => stop.includes(chunk.worker ?? "")).length;
        expect(onStopped).toBeGreaterThan(0);
        const cost = renderCostMilli(SECONDS, "1080p") / 1000;
        expect(record.credits_charged).toBeCloseTo(cost, 6);
        const after = await credits();
        expect(after.used - before.used).toBeCloseTo(cost, 6);
        report(`scale 3 -> 1: the two stopped workers drained in ${(drainMs / 1000).toFixed(1)} s`);
        report(
          `scale 3 -> 1 (kept ${keep}): ${chunks.map((c) => `${c.idx}:${c.attempts}@${c.worker}`).join(" ")}`,
        );
      },
    );

    it("KEDA's query on this PostgreSQL: 0, 1, 7 and 200 queued chunks give 0, 1, 4 and 20 workers", async () => {
      const trigger = workerTrigger(await kustomize("overlays/cluster"));
      // Idle now: the live queue asks for no worker.
      const idle = await db.query<{ count: string }>(trigger.query);
      expect(kedaReplicas(trigger, Number(idle.rows[0]!.count))).toBe(0);

      // A database of its own on the same server, with pg-boss's schema and the service's queue.
      await db.query("drop database if exists keda_check");
      await db.query("create database keda_check");
      const boss = new PgBoss({ connectionString: databaseUrl.replace(/\/svc$/, "/keda_check") });
      boss.on("error", () => undefined);
      await boss.start();
      try {
        await boss.createQueue("svc-render");
        const checkDb = new pg.Client({
          connectionString: databaseUrl.replace(/\/svc$/, "/keda_check"),
        });
        await checkDb.connect();
        const replicas: number[] = [];
        for (const queued of [0, 1, 7, 200]) {
          await checkDb.query("delete from pgboss.job");
          if (queued > 0) {
            await boss.insert(
              Array.from({ length: queued }, (_, i) => ({
                name: "svc-render",
                data: { jobId: `chunk-${i}` },
              })),
            );
          }
          const { rows } = await checkDb.query<{ count: string }>(trigger.query);
          expect(Number(rows[0]!.count)).toBe(queued);
          replicas.push(kedaReplicas(trigger, Number(rows[0]!.count)));
        }
        await checkDb.end();
        expect(replicas).toEqual([0, 1, 4, 20]);
      } finally {
        await boss.stop({ graceful: false });
        await db.query("drop database if exists keda_check with (force)");
      }
    });

    it(
      "a new worker pod renders its first chunk's first frame soon after it starts (cold start)",
      { timeout: 600_000 },
      async () => {
        // Scale to zero, queue a render, then one new worker pod as KEDA would start it.
        const pods = await workerPods();
        await removePods(pods);
        const renderId = await submit();
        const startedMs = Date.now();
        await play(forPodman(oneWorker()), "one-worker.yaml");
        const finished = await waitFor(
          "the new worker's first chunk",
          async () => (await chunkLines(renderId, "chunk finished"))[0],
          { timeoutMs: 300_000, intervalMs: 200 },
        );
        const phases = finished.phasesMs as Record<string, number>;
        const claimedMs = (finished.time as number) - (finished.totalMs as number);
        const firstFrameMs = claimedMs + phases.firstFrame! - startedMs;
        const record = await waitForTerminalRender(service, renderId, 400_000);
        expect(record.status).toBe("completed");
        expect(firstFrameMs).toBeGreaterThan(0);
        report(
          `cold start: pod start -> first frame ${(firstFrameMs / 1000).toFixed(1)} s ` +
            `(claimed at ${((claimedMs - startedMs) / 1000).toFixed(1)} s; load ${(await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ")})`,
        );
      },
    );
  },
);
