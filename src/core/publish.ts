// Publishing a local project: scan it, zip it and upload it, giving an asset id that any number
// of renders can use (the template workflow). `svc publish` is this alone; `svc cloud render DIR`
// starts with it.
import type { AspectRatio } from "../shared/render-options";
import type { VariableValues } from "../shared/variables";
import type { ApiClient } from "./api-client";
import type { ArchiveReport } from "../shared/archive-report";
import { buildArchive, checkUploadLimit, inspectArchive } from "./archive";
import { interruptedError } from "./errors";
import type { ProjectScan } from "../shared/composition-scan";
import { scanProject } from "./project-scan";
import { checkVariables } from "./render-request";
import { uploadArchive } from "./upload";

export type PublishEvent =
  | { type: "stage"; stage: "scan" | "archive" | "upload" }
  | { type: "warning"; message: string }
  | { type: "archive"; report: ArchiveReport }
  | { type: "upload-progress"; bytes: number; totalBytes: number };

export interface PublishOptions {
  dir: string;
  composition?: string | undefined;
  aspectRatio?: AspectRatio | undefined;
  variables?: VariableValues | undefined;
  strictVariables?: boolean | undefined;
  idempotencyKey: string;
  tempDir?: string | undefined;
  uploadLimitBytes?: number | undefined;
}

export interface PublishResult {
  assetId: string;
  scan: ProjectScan;
  report: ArchiveReport;
}

/** Scans the project and checks the variables: everything that can fail before zipping. */
export async function prepareProject(
  options: Omit<PublishOptions, "idempotencyKey">,
  emit: (event: PublishEvent) => void = () => {},
): Promise<ProjectScan> {
  emit({ type: "stage", stage: "scan" });
  const scan = await scanProject(options.dir, {
    composition: options.composition,
    aspectRatio: options.aspectRatio,
  });
  for (const error of scan.schemaErrors) emit({ type: "warning", message: error });
  for (const warning of checkVariables(
    scan.variables,
    options.variables,
    options.strictVariables ?? false,
  )) {
    emit({ type: "warning", message: warning });
  }
  return scan;
}

/** The dry run: what would be uploaded, without authentication, service or upload. */
export async function dryRunProject(
  options: Omit<PublishOptions, "idempotencyKey">,
  emit?: (event: PublishEvent) => void,
): Promise<ArchiveReport> {
  const scan = await prepareProject(options, emit);
  return inspectArchive(scan.root, {
    composition: scan.composition,
    ...(options.tempDir ? { tempDir: options.tempDir } : {}),
    ...(options.uploadLimitBytes ? { uploadLimitBytes: options.uploadLimitBytes } : {}),
  });
}

export async function publishProject(
  client: ApiClient,
  options: PublishOptions,
  hooks: { signal?: AbortSignal | undefined; onEvent?: (event: PublishEvent) => void } = {},
): Promise<PublishResult> {
  const { signal } = hooks;
  const emit = (event: PublishEvent) => hooks.onEvent?.(event);
  const scan = await prepareProject(options, emit);
  if (signal?.aborted) throw interruptedError();
  emit({ type: "stage", stage: "archive" });
  const archive = await buildArchive(scan.root, {
    composition: scan.composition,
    ...(options.tempDir ? { tempDir: options.tempDir } : {}),
    ...(options.uploadLimitBytes ? { uploadLimitBytes: options.uploadLimitBytes } : {}),
    ...(signal ? { signal } : {}),
  });
  try {
    emit({ type: "archive", report: archive.report });
    checkUploadLimit(archive);
    emit({ type: "stage", stage: "upload" });
    const uploaded = await uploadArchive(client, archive, {
      idempotencyKey: options.idempotencyKey,
      filename: `${scan.root.split(/[\\/]/).pop() || "project"}.zip`,
      signal,
      onProgress: (bytes, totalBytes) => emit({ type: "upload-progress", bytes, totalBytes }),
    });
    return { assetId: uploaded.assetId, scan, report: archive.report };
  } finally {
    await archive.dispose();
  }
}
