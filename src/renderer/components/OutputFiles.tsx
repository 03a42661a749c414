// Every file of a render with several outputs (sizes, a GIF, a poster), side by side as tiles in
// Queue and History: what each one is ("9:16 video · 1080x1920"), its thumbnail when the service
// has one, and what can be done with it — play a video or GIF, view a poster, open it or show it
// in its folder once it is downloaded here — like the single file of a one-file render.
import type { RenderRecord } from "../../shared/api";
import type { QueuedRenderOutput, QueuedRenderView } from "../../shared/ipc";
import type { RenderOutput } from "../../shared/outputs";
import { formatBytes } from "../../shared/archive-report";
import { fileName } from "../creator-names";
import { useOpenQueuedRenderFile, useRevealFile } from "../hooks/queued-renders";
import type { MediaTarget } from "../hooks/media";
import { ErrorNote } from "./ErrorNote";
import { InlineVideo, PlayButton, usePlayer } from "./InlinePlayer";

/** What an output is, in words: "16:9 video", "GIF", "Poster at 2.5 s". */
export function outputLabel(output: {
  kind: "video" | "still";
  format: string;
  aspectRatio: string;
  time: number | null;
}): string {
  if (output.kind === "still") return `${output.aspectRatio} poster at ${output.time ?? 0} s`;
  if (output.format === "gif") return `${output.aspectRatio} GIF`;
  if (output.format === "png-sequence") return `${output.aspectRatio} PNG frames`;
  return `${output.aspectRatio} ${output.format === "mp4" ? "video" : `${output.format} video`}`;
}

function OutputTile({
  label,
  detail,
  thumbnail,
  picture,
  playable,
  target,
  title,
  local,
  status,
}: {
  label: string;
  detail: string;
  thumbnail: string | null;
  picture: boolean;
  playable: boolean;
  target: MediaTarget;
  title: string;
  /** Downloaded here: open it or show it in its folder. */
  local: { queuedRenderId: string; output: number; name: string } | undefined;
  /** Not done yet, or not on disk any more. */
  status: string | undefined;
}) {
  const player = usePlayer();
  const openFile = useOpenQueuedRenderFile();
  const reveal = useRevealFile();
  return (
    <li className="output-file" aria-label={`File ${label}`}>
      <div className="output-thumb" aria-hidden="true">
        {thumbnail ? <img src={thumbnail} alt="" loading="lazy" /> : null}
      </div>
      <strong className="output-label">{label}</strong>
      <span className="muted">{detail}</span>
      {local ? (
        <span className="output-name" title={local.name} data-testid="output-file-name">
          {local.name}
        </span>
      ) : null}
      {status ? <span className="muted">{status}</span> : null}
      <div className="actions">
        {playable ? (
          <PlayButton open={player.open} onToggle={player.toggle} picture={picture} label={label} />
        ) : null}
        {local ? (
          <>
            <button
              type="button"
              aria-label={`Open file ${label}`}
              onClick={() => openFile.mutate(local)}
            >
              Open file
            </button>
            <button
              type="button"
              aria-label={`Show in folder ${label}`}
              onClick={() => reveal.mutate(local)}
            >
              Show in folder
            </button>
          </>
        ) : null}
      </div>
      {openFile.error ? (
        <ErrorNote error={openFile.error} title="Could not open the file." />
      ) : null}
      {reveal.error ? <ErrorNote error={reveal.error} /> : null}
      {player.open ? <InlineVideo target={target} title={`${title} ${label}`} /> : null}
    </li>
  );
}

/** A tile's second line: pixels, then the size and whatever else is known, " · " between. */
function fileDetail(width: number, height: number, bytes?: number, extra?: string): string {
  return [`${width}x${height}`, bytes !== undefined ? formatBytes(bytes) : undefined, extra]
    .filter(Boolean)
    .join(" · ");
}

/** A queued render's files, once its render completed. */
export function QueuedRenderFiles({
  queuedRender,
}: {
  queuedRender: QueuedRenderView & { outputs: QueuedRenderOutput[] };
}) {
  const completed = queuedRender.status === "completed";
  return (
    <ul className="output-files" aria-label="Files">
      {queuedRender.outputs.map((output) => {
        const label = outputLabel(output);
        const saved = completed && output.path !== undefined && !output.missing;
        return (
          <OutputTile
            key={output.index}
            label={label}
            detail={fileDetail(output.width, output.height, output.sizeBytes)}
            thumbnail={null}
            picture={output.kind === "still"}
            playable={completed && output.format !== "png-sequence"}
            target={{ queuedRenderId: queuedRender.id, output: output.index }}
            title={queuedRender.title}
            local={
              saved
                ? {
                    queuedRenderId: queuedRender.id,
                    output: output.index,
                    name: fileName(output.path!),
                  }
                : undefined
            }
            status={completed && output.missing ? "The file is no longer there." : undefined}
          />
        );
      })}
    </ul>
  );
}

const OUTPUT_STATUS: Record<RenderOutput["status"], string | undefined> = {
  queued: "Waiting",
  rendering: "Rendering",
  completed: undefined,
  failed: "Failed",
};

/** A history render's files, from the service's record; those this app downloaded can be opened. */
export function RenderFiles({
  render,
  localQueuedRender,
}: {
  render: RenderRecord;
  localQueuedRender: QueuedRenderView | undefined;
}) {
  const title = render.title ?? render.composition;
  return (
    <ul className="output-files" aria-label="Files">
      {render.outputs.map((output) => {
        const label = outputLabel({
          kind: output.kind,
          format: output.format,
          aspectRatio: output.aspect_ratio,
          time: output.time,
        });
        const saved = localQueuedRender?.outputs?.find(
          (file) => file.index === output.index && file.path !== undefined && !file.missing,
        );
        return (
          <OutputTile
            key={output.index}
            label={label}
            detail={fileDetail(
              output.width,
              output.height,
              output.bytes ?? undefined,
              `${output.credits_charged} credit${output.credits_charged === 1 ? "" : "s"}`,
            )}
            thumbnail={output.thumbnail_url}
            picture={output.kind === "still"}
            playable={output.status === "completed" && output.format !== "png-sequence"}
            target={{ renderId: render.render_id, output: output.index }}
            title={title}
            local={
              saved && localQueuedRender
                ? {
                    queuedRenderId: localQueuedRender.id,
                    output: output.index,
                    name: fileName(saved.path!),
                  }
                : undefined
            }
            status={OUTPUT_STATUS[output.status]}
          />
        );
      })}
    </ul>
  );
}
