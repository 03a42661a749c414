// Render options. Choices the shared schema refuses together (4k with webm or mov) are disabled
// with the reason next to them, so an impossible render cannot be asked for.
import { ASPECT_RATIOS, FORMATS, QUALITIES, RESOLUTIONS } from "../../shared/render-options";
import type { AspectRatio, OutputFormat, Quality, Resolution } from "../../shared/render-options";
import { FPS_MAX, FPS_MIN } from "../../shared/limits";
import {
  blockedFormats,
  countOf,
  blockedResolutions,
  estimatedCredits,
  renderOptionsProblem,
} from "../render-plan";
import { useUiStore } from "../store";

export function RenderOptions({
  detectedAspect,
  duration,
}: {
  detectedAspect: AspectRatio;
  duration: number | undefined;
}) {
  const render = useUiStore((state) => state.render);
  const setRender = useUiStore((state) => state.setRender);
  const formatReasons = blockedFormats(render.resolution);
  const resolutionReasons = blockedResolutions(render.format);
  const reasons = [...new Set([...formatReasons.values(), ...resolutionReasons.values()])];
  const problem = renderOptionsProblem(render);
  const credits = estimatedCredits(duration, render.resolution);
  return (
    <section className="panel" aria-labelledby="render-options-title">
      <h2 id="render-options-title">Render options</h2>
      <div className="options-grid">
        <label>
          Frames per second
          <input
            type="number"
            min={FPS_MIN}
            max={FPS_MAX}
            step={1}
            value={Number.isFinite(render.fps) ? render.fps : ""}
            onChange={(event) => setRender({ fps: event.target.valueAsNumber })}
          />
        </label>
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
              <option key={format} value={format} disabled={formatReasons.has(format)}>
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
              >
                {resolution}
                {resolutionReasons.has(resolution) ? ` (not with ${render.format})` : ""}
              </option>
            ))}
          </select>
        </label>
        <label>
          Aspect ratio
          <select
            value={render.aspectRatio ?? ""}
            onChange={(event) =>
              setRender({
                aspectRatio: (event.target.value || undefined) as AspectRatio | undefined,
              })
            }
          >
            <option value="">Detected ({detectedAspect})</option>
            {ASPECT_RATIOS.map((ratio) => (
              <option key={ratio}>{ratio}</option>
            ))}
          </select>
        </label>
      </div>
      {reasons.map((reason) => (
        <p key={reason} className="note" data-testid="option-reason">
          {reason}
        </p>
      ))}
      {problem && !reasons.includes(problem) ? (
        <p className="issue" role="alert">
          {problem}
        </p>
      ) : null}
      <p className="muted">
        Estimated cost:{" "}
        {credits === undefined ? "unknown (no duration)" : countOf(credits, "credit")}
      </p>
    </section>
  );
}
