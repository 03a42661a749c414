// Maps a renders row to the wire record of SPEC.md section 4, signing fresh short-lived
// video/thumbnail URLs on every read (clients must not cache them), with its outputs (a render
// submitted with `outputs`: its render_outputs rows; else the render itself as its one output).
import type { RenderRecord, RenderWarning } from "../../shared/api";
import type { RenderOutputsTable, RendersTable } from "../db/schema";
import type { RenderOutput } from "../../shared/outputs";
import { outputSize, type AspectRatio, type Resolution } from "../../shared/render-options";
import type { ServiceContext } from "../context";
import { fromMilli } from "./credits";
import { loadOutputs } from "./output-repository";
import { parseLibraries } from "./page-findings";

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
  const urls = await outputUrls(ctx, row);
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
    ...urls,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    callback_id: row.callback_id,
    warnings: JSON.parse(row.warnings_json) as RenderWarning[],
    asset_id: row.asset_id,
    variables: parseVariables(row.variables_json),
    strict_variables: row.strict_variables === 1,
    outputs: await renderOutputs(ctx, row, urls),
    libraries: parseLibraries(row.libraries_json),
  };
}

function parseVariables(json: string): Record<string, unknown> {
  const value: unknown = JSON.parse(json);
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The wire record of one output (signing its URLs now when it is completed and kept). */
export async function toOutputRecord(
  ctx: ServiceContext,
  render: RendersTable,
  row: RenderOutputsTable,
): Promise<RenderOutput> {
  const kept =
    row.status === "completed" && render.status !== "failed" && render.deleted_ms === null;
  const expiresInSeconds = ctx.config.downloadUrlTtlSeconds;
  const sign = (key: string | null) =>
    kept && key ? ctx.store.signGet(key, { expiresInSeconds }) : Promise.resolve(null);
  const [url, thumbnailUrl] = await Promise.all([sign(row.file_key), sign(row.thumbnail_key)]);
  return {
    index: row.idx,
    kind: row.kind,
    format: row.format as RenderOutput["format"],
    resolution: row.resolution as Resolution,
    aspect_ratio: row.aspect_ratio as AspectRatio,
    width: row.width,
    height: row.height,
    time: row.time_seconds,
    status: render.status === "failed" && row.status !== "completed" ? "failed" : row.status,
    url,
    thumbnail_url: thumbnailUrl,
    bytes: row.bytes,
    credits_charged: fromMilli(row.credits_charged_milli),
  };
}

/**
 * Every output of a render as in its record: its render_outputs rows, or for a render without
 * them its one output, the render itself (`urls`: the render's signed video and thumbnail URLs).
 */
export async function renderOutputs(
  ctx: ServiceContext,
  render: RendersTable,
  urls: { video_url: string | null; thumbnail_url: string | null },
): Promise<RenderOutput[]> {
  if (render.output_count > 0) {
    const rows = await loadOutputs(ctx.db, render.id);
    return Promise.all(rows.map((row) => toOutputRecord(ctx, render, row)));
  }
  const aspectRatio = render.aspect_ratio as AspectRatio;
  const resolution = render.resolution as Resolution;
  return [
    {
      index: 0,
      kind: "video",
      format: render.format as RenderOutput["format"],
      resolution,
      aspect_ratio: aspectRatio,
      ...outputSize(aspectRatio, resolution),
      time: null,
      status: render.status,
      url: urls.video_url,
      thumbnail_url: urls.thumbnail_url,
      bytes: null,
      credits_charged: fromMilli(render.credits_charged_milli),
    },
  ];
}
