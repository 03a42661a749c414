// Captions for the open project (issue 37): add a subtitle file (choose it, or drop it on the
// project), pick how captions look from small previews, fix a caption's words or times in a list;
// the preview shows every change at once and Render burns them in. Creators' words only: no file
// formats or flags beyond what a subtitle file is called.
import { useRef } from "react";
import { CAPTION_STYLE_LABELS, CAPTION_STYLES, type CaptionStyle } from "../../shared/captions";
import { CAPTION_FILE, cueProblem, loadCaptionFile, useCaptionsStore } from "../hooks/captions";
import { useUiStore } from "../store";

function formatTime(seconds: number): string {
  return Number.isFinite(seconds) ? String(Math.round(seconds * 1000) / 1000) : "";
}

function StylePicker() {
  const style = useCaptionsStore((state) => state.style);
  const setStyle = useCaptionsStore((state) => state.setStyle);
  return (
    <fieldset className="caption-styles">
      <legend>Look</legend>
      {CAPTION_STYLES.map((name: CaptionStyle) => (
        <label key={name} className={name === style ? "caption-style chosen" : "caption-style"}>
          <input
            type="radio"
            name="caption-style"
            value={name}
            checked={name === style}
            onChange={() => setStyle(name)}
          />
          <span className={`caption-thumb ${name}`} aria-hidden="true">
            <span>
              {name === "social" ? (
                <>
                  SAY <em>HELLO</em>
                </>
              ) : (
                <>
                  Say <em>hello</em> to all
                </>
              )}
            </span>
          </span>
          <span className="caption-style-name">{CAPTION_STYLE_LABELS[name].name}</span>
          <span className="muted caption-style-text">{CAPTION_STYLE_LABELS[name].description}</span>
        </label>
      ))}
    </fieldset>
  );
}

function CueList() {
  const cues = useCaptionsStore((state) => state.cues);
  const editCue = useCaptionsStore((state) => state.editCue);
  return (
    <ol className="cue-list" aria-label="Captions">
      {cues.map((cue, index) => {
        const problem = cueProblem(cue);
        const id = `cue-${index}`;
        return (
          <li key={index} className={problem ? "cue-row has-issue" : "cue-row"}>
            <label>
              <span className="sr-only">Caption {index + 1} starts at (seconds)</span>
              <input
                type="number"
                step="0.01"
                min="0"
                value={formatTime(cue.start)}
                aria-describedby={`${id}-issue`}
                onChange={(event) => editCue(index, { start: event.target.valueAsNumber })}
              />
            </label>
            <span aria-hidden="true">–</span>
            <label>
              <span className="sr-only">Caption {index + 1} ends at (seconds)</span>
              <input
                type="number"
                step="0.01"
                min="0"
                value={formatTime(cue.end)}
                aria-describedby={`${id}-issue`}
                onChange={(event) => editCue(index, { end: event.target.valueAsNumber })}
              />
            </label>
            <label className="cue-text">
              <span className="sr-only">Caption {index + 1} words</span>
              <input
                type="text"
                dir="auto"
                value={cue.text.replace(/\n/g, " / ")}
                aria-describedby={`${id}-issue`}
                onChange={(event) =>
                  editCue(index, { text: event.target.value.replace(/\s*\/\s*/g, "\n") })
                }
              />
            </label>
            <span id={`${id}-issue`} className="issue" role={problem ? "alert" : undefined}>
              {problem ?? ""}
            </span>
          </li>
        );
      })}
    </ol>
  );
}

export function CaptionsPanel() {
  const dir = useUiStore((state) => state.projectDir);
  const state = useCaptionsStore();
  const input = useRef<HTMLInputElement>(null);
  const mine = state.projectDir === dir && state.cues.length > 0;
  return (
    <section className="panel captions-panel" aria-labelledby="captions-title">
      <div className="panel-head">
        <h2 id="captions-title">Captions</h2>
        <div className="actions">
          <button type="button" onClick={() => input.current?.click()}>
            {mine ? "Replace subtitles…" : "Add subtitles…"}
          </button>
          {mine ? (
            <button type="button" onClick={() => state.clear()}>
              Remove
            </button>
          ) : null}
        </div>
        <input
          ref={input}
          type="file"
          hidden
          accept=".srt,.vtt,.json"
          aria-label="Subtitle file"
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file && dir && CAPTION_FILE.test(file.name)) void loadCaptionFile(dir, file);
            event.target.value = "";
          }}
        />
      </div>
      {state.problem ? (
        <div className="error-note" role="alert">
          <p>
            <strong>{state.problem.fileName} cannot be used.</strong> {state.problem.error.message}
          </p>
          <p className="muted">{state.problem.error.hint}</p>
        </div>
      ) : null}
      {mine ? (
        <>
          <p className="muted">
            {state.cues.length} {state.cues.length === 1 ? "caption" : "captions"} from{" "}
            {state.fileName}. They show in the preview and are drawn into the video.
          </p>
          <StylePicker />
          <CueList />
        </>
      ) : (
        <p className="muted">
          Add a subtitle file (from your editor or a transcription service), or drop it on this
          window, to show captions on the video.
        </p>
      )}
    </section>
  );
}
