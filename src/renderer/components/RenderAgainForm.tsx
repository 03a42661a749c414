// History's "Render again": new variable values against the asset a render was made from (the
// service's render record carries its asset id and values). The form is generated from the
// variables the composition declares (the service reads them from the asset), starting from the
// render's own values and validated as on the Project screen; "Edit as JSON" is the way for a
// composition without a schema, or when the service cannot read one. The service checks the values
// again when the queued render is submitted (strict: a mismatch fails the queued render).
import { useId, useMemo, useState } from "react";
import type { RenderRecord } from "../../shared/api";
import {
  resolveVariables,
  blockingIssues,
  validateVariables,
  type VariableDefinition,
  type VariableValues,
} from "../../shared/variables";
import { parseVariableValues, useRenderAgain, useRenderVariables } from "../hooks/renders";
import { ErrorNote } from "./ErrorNote";
import { StrictToggle } from "./StrictToggle";
import { QueuedNote } from "./QueuedNote";
import { VariableField } from "./VariablesForm";

export function RenderAgainForm({
  render,
  onClose,
}: {
  render: RenderRecord;
  onClose: () => void;
}) {
  const id = useId();
  const declared = useRenderVariables(render);
  const definitions = declared.data?.variables ?? [];
  const [asJson, setAsJson] = useState(false);
  const [values, setValues] = useState<VariableValues>(() => ({ ...render.variables }));
  const [text, setText] = useState(() => JSON.stringify(render.variables, null, 2));
  const [strict, setStrict] = useState(render.strict_variables);
  const submit = useRenderAgain();
  const typed = !asJson && definitions.length > 0;
  const parsed = parseVariableValues(text);
  const issues = useMemo(
    () => (typed ? validateVariables(definitions, values) : []),
    [typed, definitions, values],
  );
  const blocked = typed ? blockingIssues(issues, strict).length > 0 : !parsed.ok;
  const switchMode = () => {
    if (typed) setText(JSON.stringify(values, null, 2));
    else if (parsed.ok) setValues(parsed.values);
    setAsJson(typed);
  };
  return (
    <form
      className="render-again"
      aria-label="Render again"
      onSubmit={(event) => {
        event.preventDefault();
        if (blocked) return;
        const variables = typed ? values : parsed.ok ? parsed.values : undefined;
        if (!variables) return;
        submit.mutate({ render, assetId: render.asset_id, variables, strictVariables: strict });
      }}
    >
      <p className="muted">
        Same upload and options ({render.format} · {render.resolution} · {render.fps} fps); only the
        variables change. Nothing is uploaded again.
      </p>
      {declared.isPending && !asJson ? (
        <p className="muted" role="status">
          Reading the composition’s variables…
        </p>
      ) : null}
      {declared.error && !asJson ? (
        <ErrorNote
          error={declared.error}
          title="Could not read the composition’s variables; edit them as JSON."
        />
      ) : null}
      {declared.isSuccess && definitions.length === 0 && !asJson ? (
        <p className="muted">The composition declares no variables; values can be given as JSON.</p>
      ) : null}
      {typed ? (
        <TypedValues
          idPrefix={`${id}-var`}
          definitions={definitions}
          values={values}
          issues={issues}
          onChange={(key, value) => setValues((current) => ({ ...current, [key]: value }))}
        />
      ) : (
        <JsonValues
          id={id}
          text={text}
          setText={setText}
          problem={parsed.ok ? "" : parsed.problem}
        />
      )}
      {typed && issues.length > 0 ? (
        <p className={blocked ? "issue" : "warning"}>
          {strict
            ? "Fix the values marked above to render (Strict variables is on)."
            : blocked
              ? "Fix the values marked above to render: a wrong type, choice or range is refused."
              : "These values may not render as intended (Strict variables is off)."}
        </p>
      ) : null}
      <div className="actions">
        <StrictToggle checked={strict} onChange={setStrict} />
        <button type="submit" className="primary" disabled={blocked || submit.isPending}>
          Render with these values
        </button>
        {definitions.length > 0 ? (
          <button type="button" onClick={switchMode} disabled={!typed && !parsed.ok}>
            {typed ? "Edit as JSON" : "Edit as a form"}
          </button>
        ) : null}
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {submit.data ? <QueuedNote title={submit.data.title} /> : null}
      {submit.error ? <ErrorNote error={submit.error} title="Could not render again." /> : null}
    </form>
  );
}

function TypedValues({
  idPrefix,
  definitions,
  values,
  issues,
  onChange,
}: {
  idPrefix: string;
  definitions: VariableDefinition[];
  values: VariableValues;
  issues: ReturnType<typeof validateVariables>;
  onChange: (id: string, value: unknown) => void;
}) {
  const resolved = resolveVariables(definitions, values);
  return (
    <div className="variables">
      {definitions.map((definition) => (
        <VariableField
          key={definition.id}
          definition={definition}
          value={resolved[definition.id]}
          issue={issues.find((issue) => issue.id === definition.id)}
          idPrefix={idPrefix}
          onChange={onChange}
          canPickFiles={false}
        />
      ))}
    </div>
  );
}

function JsonValues({
  id,
  text,
  setText,
  problem,
}: {
  id: string;
  text: string;
  setText: (text: string) => void;
  problem: string;
}) {
  return (
    <>
      <label htmlFor={`${id}-values`}>Variables (JSON)</label>
      <textarea
        id={`${id}-values`}
        className="json-editor"
        rows={Math.min(10, Math.max(3, text.split("\n").length))}
        spellCheck={false}
        value={text}
        aria-invalid={problem !== ""}
        aria-describedby={`${id}-problem`}
        onChange={(event) => setText(event.target.value)}
      />
      <small id={`${id}-problem`} className="issue" role={problem ? "alert" : undefined}>
        {problem}
      </small>
    </>
  );
}
