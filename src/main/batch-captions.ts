// The captions of each row of a "Render many…" batch (issue 37): a caption file the creator chose
// for the row in the grid (its cues, read in the window), else the file the table's `captions`
// column names inside the project (read and checked here, so a missing or broken one stops the
// batch before anything is uploaded, naming the row and the line), else the captions of the
// project (the Captions panel's, sent as the batch's settings). The style is the row's
// `caption_style` cell, else the batch's. Messages name files by their name only.
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { BatchRowCheck } from "../shared/batch";
import {
  CAPTIONS_MAX_CHARS,
  DEFAULT_CAPTION_STYLE,
  parseCaptions,
  type CaptionCue,
} from "../shared/captions";
import type { QueuedRenderSettings } from "../shared/ipc";
import { resolveInsideRoot } from "../node/index";
import { appError } from "./ipc-errors";

export type QueuedRenderCaptions = NonNullable<QueuedRenderSettings["captions"]>;

/** Each row's captions (undefined: none), in the order of `rows`. */
export async function batchRowCaptions(
  root: string,
  rows: BatchRowCheck[],
  /** Cues the creator chose for a row in the grid, by row number. */
  chosen: Map<number, CaptionCue[]>,
  shared: QueuedRenderCaptions | undefined,
): Promise<Array<QueuedRenderCaptions | undefined>> {
  const look = shared?.look ? { look: shared.look } : {};
  const out: Array<QueuedRenderCaptions | undefined> = [];
  for (const row of rows) {
    const style = row.captionStyle ?? shared?.style ?? DEFAULT_CAPTION_STYLE;
    const cues = chosen.get(row.row) ?? (row.captions ? await projectCues(root, row) : undefined);
    if (cues) out.push({ cues, style, ...look, burn_in: true, soft_track: false });
    else out.push(shared ? { ...shared, style } : undefined);
  }
  return out;
}

async function projectCues(root: string, row: BatchRowCheck): Promise<CaptionCue[]> {
  const name = basename(row.captions!);
  const path = await resolveInsideRoot(root, "/" + row.captions!.replace(/^[/\\]+/, ""));
  const text = path ? await readFile(path, "utf8").catch(() => undefined) : undefined;
  if (text === undefined) {
    throw appError(
      "batch_invalid",
      `Row ${row.row}: there is no caption file ${name} in the project.`,
      "Put the file in the project folder, or choose the row's caption file in the table.",
    );
  }
  if (text.length > CAPTIONS_MAX_CHARS) {
    throw appError("batch_invalid", `Row ${row.row}: the caption file ${name} is too long.`);
  }
  const parsed = parseCaptions(text, name);
  if (!parsed.ok) {
    throw appError(
      "batch_invalid",
      `Row ${row.row}: ${name}: ${parsed.error.message}`,
      parsed.error.hint,
    );
  }
  return parsed.track.cues;
}
