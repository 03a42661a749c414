// Maps a renders row to the wire record of SPEC.md section 4, signing fresh short-lived
// video/thumbnail URLs on every read (clients must not cache them).
import type { RenderRecord, RenderWarning } from "../../shared/api";
import type { RendersTable } from "../db/schema";
import type { ServiceContext } from "../context";
import { fromMilli } from "./credits";

/**
 * A render's stored warnings with the engine's warnings about the page added (code
 * `composition`, `param: "project"`), each once.
 */
export function withCompositionWarnings(warningsJson: string, messages: string[]): string {
  const warnings = JSON.parse(warningsJson) as RenderWarning[];
  for (const message of messages) {
    if (warnings.some((warning) => warning.message === message)) continue;
    warnings.push({ code: "composition", message, param: "project" });
  }
  return JSON.stringify(warnings);
}

const seconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

export async function outputUrls(
  ctx: ServiceContext,
  row: RendersTable,
): Promise<{ video_url: string | null; thumbnail_url: string | null }> {
  if (row.status !== "completed" || row.deleted_ms !== null)
    return { video_url: null, thumbnail_url: null };
  const expiresInSeconds = ctx.config.downloadUrlTtlSeconds;
  const sign = (key: string | null) =>
    key ? ctx.store.signGet(key, { expiresInSeconds }) : Promise.resolve(null);
  const [video_url, thumbnail_url] = await Promise.all([
    sign(row.video_key),
    sign(row.thumbnail_key),
  ]);
  return { video_url, thumbnail_url };
}

export async function toRenderRecord(
  ctx: ServiceContext,
  row: RendersTable,
): Promise<RenderRecord> {
  return {
    render_id: row.id,
    status: row.status,
    progress: row.status === "completed" ? 1 : Math.min(1, Math.max(0, row.progress)),
    title: row.title,
    fps: row.fps,
    quality: row.quality as RenderRecord["quality"],
    format: row.format as RenderRecord["format"],
    resolution: row.resolution as RenderRecord["resolution"],
    aspect_ratio: row.aspect_ratio as RenderRecord["aspect_ratio"],
    composition: row.composition,
    duration: row.duration,
    credits_charged: fromMilli(row.credits_charged_milli),
    created_at: Math.floor(row.created_ms / 1000),
    started_at: seconds(row.started_ms),
    completed_at: seconds(row.completed_ms),
    ...(await outputUrls(ctx, row)),
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    callback_id: row.callback_id,
    warnings: JSON.parse(row.warnings_json) as RenderWarning[],
    asset_id: row.asset_id,
    variables: parseVariables(row.variables_json),
    strict_variables: row.strict_variables === 1,
  };
}

function parseVariables(json: string): Record<string, unknown> {
  const value: unknown = JSON.parse(json);
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
