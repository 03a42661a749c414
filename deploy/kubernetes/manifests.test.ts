// Every object of every overlay (and the dev store) validates against the Kubernetes API schemas
// (npm kubernetes-models) or KEDA's (@kubernetes-models/keda), as `kubectl kustomize` renders it;
// and the settings the issue asks of the pods are there: non-root, read-only root with emptyDir
// scratch, no capabilities, probes, requests and limits, a grace period longer than the drain.
import type { Model } from "@kubernetes-models/base";
import { ScaledObject, TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { Deployment } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { ConfigMap, Secret, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { find, kedaReplicas, kustomize, OVERLAYS, workerTrigger, type Manifest } from "./manifests";

type ModelClass = new (data: never) => Model<unknown>;
const SCHEMAS: Record<string, ModelClass> = {
  "apps/v1 Deployment": Deployment,
  "v1 Service": Service,
  "v1 ConfigMap": ConfigMap,
  "v1 Secret": Secret,
  "policy/v1 PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1 NetworkPolicy": NetworkPolicy,
  "keda.sh/v1alpha1 ScaledObject": ScaledObject,
  "keda.sh/v1alpha1 TriggerAuthentication": TriggerAuthentication,
};

function validate(item: Manifest): void {
  const Schema = SCHEMAS[`${item.apiVersion} ${item.kind}`];
  if (!Schema)
    throw new Error(`no schema for ${item.apiVersion} ${item.kind} ${item.metadata.name}`);
  new Schema(item as never).validate();
}

interface Container {
  args?: string[];
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: unknown;
  livenessProbe?: unknown;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  securityContext?: Record<string, unknown>;
  terminationGracePeriodSeconds?: number;
  containers: Container[];
  volumes?: { name: string; emptyDir?: unknown }[];
}
const podSpec = (item: Manifest) => (item.spec as { template: { spec: PodSpec } }).template.spec;

describe.each(OVERLAYS)("the %s overlay", (overlay) => {
  it("validates against the Kubernetes and KEDA schemas, object by object", async () => {
    const manifests = await kustomize(`overlays/${overlay}`);
    const kinds = new Set(manifests.map((item) => item.kind));
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining([
        "ConfigMap",
        "Deployment",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "ScaledObject",
        "Service",
        "TriggerAuthentication",
      ]),
    );
    for (const item of manifests) validate(item);
  });

  it("runs api and worker pods non-root, read-only, with no capabilities, probed and bounded", async () => {
    const manifests = await kustomize(`overlays/${overlay}`);
    for (const name of ["svc-api", "svc-worker"]) {
      const spec = podSpec(find(manifests, "Deployment", name));
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      const [container] = spec.containers;
      // The worker keeps SYS_CHROOT in its bounding set, the one thing Chromium's sandbox needs
      // from a pod (docs/deploy.md); uid 1000 holds no capability itself.
      expect(container!.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities:
          name === "svc-worker" ? { drop: ["ALL"], add: ["SYS_CHROOT"] } : { drop: ["ALL"] },
      });
      expect(container!.readinessProbe).toBeDefined();
      expect(container!.livenessProbe).toBeDefined();
      expect(container!.resources?.requests).toBeDefined();
      expect(container!.resources?.limits).toBeDefined();
      // Every place written is an emptyDir: the data dir and /tmp (HOME, the browser's profile).
      const scratch = new Set(spec.volumes?.filter((v) => v.emptyDir).map((v) => v.name));
      const mounts = container!.volumeMounts ?? [];
      expect(mounts.map((mount) => mount.mountPath).sort()).toEqual(["/tmp", "/var/lib/svc"]);
      expect(mounts.every((mount) => scratch.has(mount.name))).toBe(true);
    }
    const worker = podSpec(find(manifests, "Deployment", "svc-worker"));
    expect(worker.containers[0]!.args).toEqual(expect.arrayContaining(["--role", "worker"]));
    // About two cores per render slot, one slot per pod.
    expect(worker.containers[0]!.resources?.requests?.cpu).toBe("2");
    expect(worker.containers[0]!.args).toEqual(expect.arrayContaining(["--jobs", "1"]));
    // The pod outlives the service's own drain (a running chunk finishes on SIGTERM).
    const settings = find(manifests, "ConfigMap", "svc-settings").data as Record<string, string>;
    const drain = Number(settings.SVC_SERVER_SHUTDOWN_GRACE_SECONDS);
    expect(worker.terminationGracePeriodSeconds).toBeGreaterThan(drain);
  });

  it("scales workers from zero on the queue: 0, 1, 7 and 200 jobs", async () => {
    const trigger = workerTrigger(await kustomize(`overlays/${overlay}`));
    expect(trigger.minReplicas).toBe(0);
    const max = trigger.maxReplicas;
    expect([0, 1, 7, 200].map((jobs) => kedaReplicas(trigger, jobs))).toEqual([
      0,
      1,
      Math.min(max, 4),
      Math.min(max, 100),
    ]);
  });
});

it("the dev store validates too", async () => {
  for (const item of await kustomize("dev-store")) validate(item);
});

it("a wrong field fails validation, so the check above can fail", async () => {
  const api = find(await kustomize("overlays/cluster"), "Deployment", "svc-api");
  const broken = structuredClone(api) as Manifest & { spec: { replicas: unknown } };
  broken.spec.replicas = "two";
  expect(() => validate(broken)).toThrow(/replicas/);
});
