// History's "Render again": new variable values against the asset a render was made from (the
// service's render record carries its asset id and values). The values are edited as JSON, starting
// from the render's own; the service checks them against the composition's schema when the job is
// submitted (strict: a mismatch fails the job).
import { useId, useState } from "react";
import type { RenderRecord } from "../../shared/api";
import { parseVariableValues, useRenderAgain } from "../hooks/renders";
import { ErrorNote } from "./ErrorNote";
import { QueuedNote } from "./QueuedNote";

export function RenderAgainForm({
  render,
  onClose,
}: {
  render: RenderRecord;
  onClose: () => void;
}) {
  const id = useId();
  const [text, setText] = useState(() => JSON.stringify(render.variables, null, 2));
  const [strict, setStrict] = useState(render.strict_variables);
  const submit = useRenderAgain();
  const parsed = parseVariableValues(text);
  return (
    <form
      className="render-again"
      aria-label="Render again"
      onSubmit={(event) => {
        event.preventDefault();
        if (!parsed.ok) return;
        submit.mutate({
          render,
          assetId: render.asset_id,
          variables: parsed.values,
          strictVariables: strict,
        });
      }}
    >
      <p className="muted">
        Same upload and options ({render.format} · {render.resolution} · {render.fps} fps); only the
        variables change. Nothing is uploaded again.
      </p>
      <label htmlFor={`${id}-values`}>Variables (JSON)</label>
      <textarea
        id={`${id}-values`}
        className="json-editor"
        rows={Math.min(10, Math.max(3, text.split("\n").length))}
        spellCheck={false}
        value={text}
        aria-invalid={!parsed.ok}
        aria-describedby={`${id}-problem`}
        onChange={(event) => setText(event.target.value)}
      />
      <small id={`${id}-problem`} className="issue" role={parsed.ok ? undefined : "alert"}>
        {parsed.ok ? "" : parsed.problem}
      </small>
      <div className="actions">
        <label className="inline">
          <input
            type="checkbox"
            checked={strict}
            onChange={(event) => setStrict(event.target.checked)}
          />
          Strict variables
        </label>
        <button type="submit" className="primary" disabled={!parsed.ok || submit.isPending}>
          Render with these values
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {submit.data ? <QueuedNote title={submit.data.title} /> : null}
      {submit.error ? <ErrorNote error={submit.error} title="Could not render again." /> : null}
    </form>
  );
}
