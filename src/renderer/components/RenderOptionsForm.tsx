// Render options, remembered per project (store.ts) with "Default options" to go back. Choices
// the shared schema refuses together (4k with webm or mov) are disabled, saying why in the option
// itself, so an impossible render cannot be asked for and no warning lingers once it no longer
// applies. Frames per second takes a common rate from its list or a typed whole number; what is
// typed stays in the field, and anything else is refused there, in words, until it is fixed.
import { useEffect, useId, useState } from "react";
import { ASPECT_RATIOS, FORMATS, QUALITIES, RESOLUTIONS } from "../../shared/render-options";
import { GIF_MAX_FPS } from "../../shared/limits";
import type { AspectRatio, OutputFormat, Quality, Resolution } from "../../shared/render-options";
import {
  COMMON_FPS,
  parseFps,
  blockedFormats,
  countOf,
  filesSummary,
  formatSeconds,
  blockedResolutions,
  queuedRenderSettingsFrom,
  outputsOf,
  plannedCredits,
  posterTimeOf,
  renderOptionsProblem,
  SIZE_LABELS,
  tickedSizes,
  type CompositionFacts,
} from "../render-plan";
import { useUiStore } from "../store";
import { useRenderQuote } from "../hooks/renders";
import { useLocalQuote } from "../hooks/project";
import { useServiceState } from "../hooks/app";

function FpsField({ fps, onChange }: { fps: number; onChange: (fps: number) => void }) {
  const listId = useId();
  const problemId = useId();
  const [text, setText] = useState(Number.isFinite(fps) ? String(fps) : "");
  // Another project's options (or "Default options") replace what is shown.
  useEffect(() => {
    setText((shown) => {
      const typed = parseFps(shown);
      return Number.isFinite(fps) && !("fps" in typed && typed.fps === fps) ? String(fps) : shown;
    });
  }, [fps]);
  const parsed = parseFps(text);
  const problem = "problem" in parsed ? parsed.problem : undefined;
  return (
    <label>
      Frames per second
      <input
        type="text"
        inputMode="numeric"
        list={listId}
        value={text}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? problemId : undefined}
        onChange={(event) => {
          setText(event.target.value);
          const next = parseFps(event.target.value);
          onChange("fps" in next ? next.fps : Number.NaN);
        }}
      />
      <datalist id={listId}>
        {COMMON_FPS.map((rate) => (
          <option key={rate} value={rate} />
        ))}
      </datalist>
      {problem ? (
        <small id={problemId} className="issue" role="alert">
          {problem}
        </small>
      ) : null}
    </label>
  );
}

/** Which sizes to render (the first ticked is the main file) and what else to make from them. */
function FilesFields({ facts }: { facts: CompositionFacts }) {
  const render = useUiStore((state) => state.render);
  const setRender = useUiStore((state) => state.setRender);
  const sizes = tickedSizes(render, facts.aspectRatio);
  const posterTime = posterTimeOf(render, facts.duration);
  const [posterText, setPosterText] = useState(String(posterTime));
  // Another project's options (or "Default options") replace what is shown.
  useEffect(() => {
    setPosterText((shown) =>
      Number.isNaN(posterTime) || Number(shown.replace(",", ".")) === posterTime
        ? shown
        : String(posterTime),
    );
  }, [posterTime]);
  return (
    <div className="files-fields">
      <fieldset className="choices">
        <legend>Sizes</legend>
        {ASPECT_RATIOS.map((ratio) => {
          const ticked = sizes.includes(ratio);
          const only = ticked && sizes.length === 1;
          return (
            <label
              key={ratio}
              className="choice"
              title={only ? "At least one size is rendered." : undefined}
            >
              <input
                type="checkbox"
                checked={ticked}
                disabled={only}
                onChange={(event) =>
                  setRender({
                    aspectRatio: undefined,
                    sizes: event.target.checked
                      ? [...sizes, ratio]
                      : sizes.filter((size) => size !== ratio),
                  })
                }
              />
              {SIZE_LABELS[ratio]}
              {ratio === facts.aspectRatio ? <span className="muted"> (as made)</span> : null}
            </label>
          );
        })}
      </fieldset>
      <fieldset className="choices">
        <legend>Also make</legend>
        <label
          className="choice"
          title={render.format === "gif" ? "The video is already a GIF." : undefined}
        >
          <input
            type="checkbox"
            checked={render.gif && render.format !== "gif"}
            disabled={render.format === "gif"}
            onChange={(event) => setRender({ gif: event.target.checked })}
          />
          A GIF{render.fps > GIF_MAX_FPS ? ` (at most ${GIF_MAX_FPS} fps)` : ""}
        </label>
        <label className="choice">
          <input
            type="checkbox"
            checked={render.poster}
            onChange={(event) => setRender({ poster: event.target.checked })}
          />
          A poster picture
        </label>
        {render.poster ? (
          <label className="choice poster-time">
            at
            <input
              type="text"
              inputMode="decimal"
              aria-label="Poster time in seconds"
              value={posterText}
              onChange={(event) => {
                const typed = event.target.value.trim().replace(",", ".");
                setPosterText(event.target.value);
                setRender({
                  posterTime:
                    typed === "" || !/^\d*\.?\d*$/.test(typed) ? Number.NaN : Number(typed),
                });
              }}
            />
            seconds
          </label>
        ) : null}
      </fieldset>
    </div>
  );
}

export function RenderOptionsForm({
  detectedAspect,
  duration,
  composition,
}: {
  detectedAspect: AspectRatio | undefined;
  duration: number | undefined;
  composition?: string;
}) {
  const render = useUiStore((state) => state.render);
  const setRender = useUiStore((state) => state.setRender);
  const resetRenderOptions = useUiStore((state) => state.resetRenderOptions);
  const formatReasons = blockedFormats(render.resolution);
  const resolutionReasons = blockedResolutions(render.format);
  // The fps field says itself what is wrong with it.
  const facts: CompositionFacts = { aspectRatio: detectedAspect, duration };
  const problem = Number.isFinite(render.fps) ? renderOptionsProblem(render, facts) : undefined;
  const credits = plannedCredits(render, facts);
  const outputs = outputsOf(render, facts);
  // The app's own service starts with the first render, not to answer a quote: until then the
  // credits line above is the quote (the queue of a service nobody uses is empty).
  const service = useServiceState().data;
  const serviceIdle = service?.mode === "local" && service.status === "stopped";
  const quote = useRenderQuote(
    duration,
    queuedRenderSettingsFrom(render, facts),
    problem === undefined && Number.isFinite(render.fps) && service !== undefined && !serviceIdle,
  );
  const localQuote = useLocalQuote();
  return (
    <section className="panel" aria-labelledby="render-options-title">
      <div className="panel-head">
        <h2 id="render-options-title">Render options</h2>
        <button type="button" onClick={resetRenderOptions}>
          Default options
        </button>
      </div>
      <div className="options-grid">
        <FpsField fps={render.fps} onChange={(fps) => setRender({ fps })} />
        <label>
          Quality
          <select
            value={render.quality}
            onChange={(event) => setRender({ quality: event.target.value as Quality })}
          >
            {QUALITIES.map((quality) => (
              <option key={quality}>{quality}</option>
            ))}
          </select>
        </label>
        <label>
          Format
          <select
            value={render.format}
            onChange={(event) => setRender({ format: event.target.value as OutputFormat })}
          >
            {FORMATS.map((format) => (
              <option
                key={format}
                value={format}
                disabled={formatReasons.has(format)}
                title={formatReasons.get(format)}
              >
                {format}
                {formatReasons.has(format) ? " (not with 4k)" : ""}
              </option>
            ))}
          </select>
        </label>
        <label>
          Resolution
          <select
            value={render.resolution}
            onChange={(event) => setRender({ resolution: event.target.value as Resolution })}
          >
            {RESOLUTIONS.map((resolution) => (
              <option
                key={resolution}
                value={resolution}
                disabled={resolutionReasons.has(resolution)}
                title={resolutionReasons.get(resolution)}
              >
                {resolution}
                {resolutionReasons.has(resolution) ? ` (not with ${render.format})` : ""}
              </option>
            ))}
          </select>
        </label>
      </div>
      <FilesFields facts={facts} />
      {problem ? (
        <p className="issue" role="alert">
          {problem}
        </p>
      ) : null}
      <p className="muted" aria-label="What one render makes">
        {outputs ? `One render makes ${filesSummary(render, facts)}. ` : ""}
        Estimated cost:{" "}
        {credits === undefined ? "unknown (no duration)" : countOf(credits, "credit")}
      </p>
      {quote.data ? (
        <p className="muted" aria-label="Estimated time on the service">
          About {formatSeconds(quote.data.estimated_total_seconds)} on the service for{" "}
          {countOf(
            quote.data.outputs.length > 1
              ? quote.data.outputs.reduce((sum, output) => sum + output.frames, 0)
              : quote.data.frames,
            "frame",
          )}
          {quote.data.estimated_queue_seconds > 0
            ? ` (${formatSeconds(quote.data.estimated_queue_seconds)} waiting: ${countOf(quote.data.queue.queued, "render")} queued)`
            : ""}
          .
        </p>
      ) : null}
      {composition ? (
        <p className="muted">
          <button
            type="button"
            disabled={localQuote.isPending || problem !== undefined}
            onClick={() =>
              localQuote.mutate({
                composition,
                settings: {
                  fps: render.fps,
                  quality: render.quality,
                  format: render.format,
                  resolution: render.resolution,
                  ...(render.aspectRatio ? { aspectRatio: render.aspectRatio } : {}),
                },
              })
            }
          >
            {localQuote.isPending ? "Measuring…" : "Estimate time on this computer"}
          </button>{" "}
          {localQuote.data ? (
            <span aria-label="Estimated time on this computer">
              About {formatSeconds(localQuote.data.estimated_seconds)} on this computer (measured on
              a few frames).
            </span>
          ) : localQuote.error ? (
            <span role="alert">The estimate failed: {localQuote.error.message}</span>
          ) : null}
        </p>
      ) : null}
    </section>
  );
}
