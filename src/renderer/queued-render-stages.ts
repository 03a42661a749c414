// The stages a queued render shows, without React. A render on this computer is told in a creator's
// stages (Preparing · Rendering · Saving): zipping, uploading and queueing are how the app hands
// work to its own local service, nothing the creator waits on. A render on a service shows them
// all (Zipping · Uploading · Queued · Rendering · Downloading).
import type { QueuedRenderStage, QueuedRenderView } from "../shared/ipc";

export const STAGES: Array<{ stage: QueuedRenderStage; label: string }> = [
  { stage: "zip", label: "Zipping" },
  { stage: "upload", label: "Uploading" },
  { stage: "queued", label: "Queued" },
  { stage: "rendering", label: "Rendering" },
  { stage: "download", label: "Downloading" },
];

const STATUS_LABELS: Record<QueuedRenderView["status"], string> = {
  waiting: "Waiting",
  running: "Running",
  completed: "Done",
  failed: "Failed",
  cancelled: "Cancelled",
};

/** The same stages on this computer: what each one is to a creator. */
const LOCAL_LABELS: Record<QueuedRenderStage, string> = {
  waiting: "Waiting",
  zip: "Preparing",
  upload: "Preparing",
  queued: "Preparing",
  rendering: "Rendering",
  download: "Saving",
};

/** The stages a queued render goes through: one rendered again from an upload starts at queued. */
export function stagesOf(queuedRender: QueuedRenderView, local: boolean): typeof STAGES {
  let stages = STAGES;
  if (queuedRender.source.type === "asset")
    stages = STAGES.filter((s) => s.stage !== "zip" && s.stage !== "upload");
  // A download from History only downloads.
  if (queuedRender.source.type === "render") stages = STAGES.filter((s) => s.stage === "download");
  if (!local) return stages;
  // One step per creator's stage, named by the first of the service's stages it covers.
  const seen = new Set<string>();
  return stages
    .map((s) => ({ stage: s.stage, label: LOCAL_LABELS[s.stage] }))
    .filter((s) => !seen.has(s.label) && Boolean(seen.add(s.label)));
}

/** Where the queued render is among `stages` (a local queued render's zip/upload/queued are all "Preparing"). */
export function stageIndex(
  queuedRender: QueuedRenderView,
  stages: typeof STAGES,
  local: boolean,
): number {
  const label = local ? LOCAL_LABELS[queuedRender.stage] : undefined;
  return stages.findIndex((s) => (label ? s.label === label : s.stage === queuedRender.stage));
}

export function stageLabel(queuedRender: QueuedRenderView, local: boolean): string {
  if (queuedRender.status !== "running") return STATUS_LABELS[queuedRender.status];
  if (local) return LOCAL_LABELS[queuedRender.stage];
  return STAGES.find((s) => s.stage === queuedRender.stage)?.label ?? "Waiting";
}
