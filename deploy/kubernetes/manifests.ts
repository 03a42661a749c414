// The Kubernetes manifests as the cluster receives them: `kubectl kustomize` of an overlay, parsed
// into objects. The schema test and the podman test (src/server/kubernetes.test.ts) read them
// here, so both check what an operator applies, not a copy.
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";

export const KUBERNETES_DIR = resolve(import.meta.dirname);
export const OVERLAYS = ["cluster", "one-node"] as const;
export type Overlay = (typeof OVERLAYS)[number];

/** A manifest: apiVersion, kind, metadata.name and the rest as given. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

const KUBECTL_APT = "apt-get install -y --no-install-recommends kubernetes-client";

/** The objects `kubectl kustomize` makes of a folder under deploy/kubernetes/. */
export async function kustomize(folder: string): Promise<Manifest[]> {
  let yaml: string;
  try {
    ({ stdout: yaml } = await promisify(execFile)(
      "kubectl",
      ["kustomize", resolve(KUBERNETES_DIR, folder)],
      { maxBuffer: 16 * 1024 * 1024 },
    ));
  } catch (error) {
    const { code, stderr } = error as { code?: string; stderr?: string };
    if (code === "ENOENT") throw new Error(`kubectl is not installed; as root: ${KUBECTL_APT}`);
    throw new Error(`kubectl kustomize ${folder} failed: ${stderr ?? String(error)}`);
  }
  return parseAllDocuments(yaml).map((document) => {
    if (document.errors.length > 0) throw new Error(String(document.errors[0]));
    return document.toJS() as Manifest;
  });
}

/** The one object of a kind and name; throws naming what is missing. */
export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((item) => item.kind === kind && item.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the manifests`);
  return found;
}

/** The worker ScaledObject's trigger: its SQL query and the numbers KEDA scales with. */
export interface QueueTrigger {
  query: string;
  target: number;
  activation: number;
  minReplicas: number;
  maxReplicas: number;
}

export function workerTrigger(manifests: Manifest[]): QueueTrigger {
  const spec = find(manifests, "ScaledObject", "svc-worker").spec as {
    minReplicaCount: number;
    maxReplicaCount: number;
    triggers: { type: string; metadata: Record<string, string> }[];
  };
  const trigger = spec.triggers.find((item) => item.type === "postgresql");
  if (!trigger) throw new Error("the svc-worker ScaledObject has no postgresql trigger");
  return {
    query: trigger.metadata.query!,
    target: Number(trigger.metadata.targetQueryValue),
    activation: Number(trigger.metadata.activationTargetQueryValue ?? 0),
    minReplicas: spec.minReplicaCount,
    maxReplicas: spec.maxReplicaCount,
  };
}

/**
 * The replicas KEDA asks for when the query answers `value`: none while the value is at or below
 * the activation value (with minReplicaCount 0), else the HPA's ceil(value / target), within the
 * bounds.
 */
export function kedaReplicas(trigger: QueueTrigger, value: number): number {
  if (value <= trigger.activation) return trigger.minReplicas;
  const wanted = Math.ceil(value / trigger.target);
  return Math.min(trigger.maxReplicas, Math.max(trigger.minReplicas, 1, wanted));
}
