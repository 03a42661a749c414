// The outputs of a render (issue 25): the render_outputs rows of a render submitted with `outputs`
// are planned here at submit, one per file; their queries (completion and charging included) are
// in output-repository.ts. A failed, cancelled or deleted render's output files are purged here.
import { outputSize, type AspectRatio } from "../../shared/render-options";
import type { PlannedOutput } from "../../shared/outputs";
import type { ServiceContext } from "../context";
import type { RenderOutputsTable } from "../db/schema";
import { forgetOutputFiles, loadOutputs } from "./output-repository";

/** The rows of a render's planned outputs, every aspect ratio settled (`detected` for the unset). */
export function outputRows(
  renderId: string,
  planned: PlannedOutput[],
  detected: AspectRatio,
): RenderOutputsTable[] {
  return planned.map((output) => {
    const aspectRatio = output.aspect_ratio ?? detected;
    const size = outputSize(aspectRatio, output.resolution);
    return {
      render_id: renderId,
      idx: output.index,
      kind: output.kind,
      format: output.format,
      resolution: output.resolution,
      aspect_ratio: aspectRatio,
      width: size.width,
      height: size.height,
      time_seconds: output.time,
      status: "queued",
      file_key: null,
      thumbnail_key: null,
      bytes: null,
      credits_charged_milli: 0,
      duration: null,
      started_ms: null,
      completed_ms: null,
    };
  });
}

/**
 * A failed, cancelled or deleted render keeps none of its outputs' files (nothing was charged
 * for them): the objects are deleted and the rows forget them.
 */
export async function purgeOutputFiles(ctx: ServiceContext, renderId: string): Promise<void> {
  const rows = await loadOutputs(ctx.db, renderId);
  for (const row of rows) {
    for (const key of new Set([row.file_key, row.thumbnail_key])) {
      if (key) await ctx.store.delete(key).catch(() => undefined);
    }
  }
  if (rows.length > 0) await forgetOutputFiles(ctx.db, renderId);
}
