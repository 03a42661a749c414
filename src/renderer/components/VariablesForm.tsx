// The variables form, one control per schema entry, with the shared validator's message under a
// control whose value breaks the schema. Values are kept as typed (a number field holding "abc"
// stays a string) so the validator, not the form, decides what is wrong.
import { fontFileName, isFontFile } from "../../shared/brand";
import { fileName } from "../creator-names";
import type { VariableDefinition, VariableIssue } from "../../shared/variables";
import { usePickImage, useVariableState, useVariableValuesFile } from "../hooks/project";
import { ErrorNote } from "./ErrorNote";
import { StrictToggle } from "./StrictToggle";
import { ImageBrowser } from "./ImageBrowser";
import { useUiStore } from "../store";

/** What a variable's control gets: its definition, value, shared attributes and change handler. */
interface FieldControlProps {
  definition: VariableDefinition;
  value: unknown;
  common: { id: string; name: string; "aria-describedby": string };
  onChange: (id: string, value: unknown) => void;
}

/** An image variable: a project-relative path, typed or (in a project) chosen with "Choose…". */
function ImageControl({ definition, value, common, onChange }: FieldControlProps) {
  const choose = (path: string) => onChange(definition.id, path);
  const { pick, browsing, closeBrowser } = usePickImage(choose);
  // Creators see the picture's file name; its path inside the project, which can be typed, waits
  // under "For developers".
  const embedded = typeof value === "string" && value.startsWith("data:");
  const shown = embedded ? "Your brand's picture" : value ? fileName(String(value)) : "No picture";
  return (
    <span className="image-field">
      <output id={common.id} aria-describedby={common["aria-describedby"]}>
        {shown}
      </output>
      <button
        type="button"
        aria-label={`Choose… for ${definition.label}`}
        onClick={() => pick.mutate()}
      >
        Choose…
      </button>
      {pick.error ? <ErrorNote error={pick.error} title="Not chosen." /> : null}
      <details className="developers">
        <summary>For developers</summary>
        <ImageTextInput
          definition={definition}
          value={value}
          common={{ ...common, id: `${common.id}-path`, name: `${common.name}-path` }}
          onChange={onChange}
        />
      </details>
      {browsing ? (
        <ImageBrowser
          label={definition.label}
          onPick={(path) => {
            choose(path);
            closeBrowser();
          }}
          onClose={closeBrowser}
        />
      ) : null}
    </span>
  );
}

function ImageTextInput({ definition, value, common, onChange }: FieldControlProps) {
  // A picture carried in the value itself (the brand kit's logo) is named, not shown as its code.
  const embedded = typeof value === "string" && value.startsWith("data:");
  return (
    <input
      {...common}
      type="text"
      spellCheck={false}
      value={embedded ? "" : String(value ?? "")}
      placeholder={embedded ? "The picture of your brand" : "path inside the project"}
      onChange={(event) => onChange(definition.id, event.target.value)}
    />
  );
}

function FontTextInput({ definition, value, common, onChange }: FieldControlProps) {
  // A font file carried in the value itself (the brand kit's) is named by its file, not its code.
  const file = typeof value === "string" && isFontFile(value);
  return (
    <input
      {...common}
      type="text"
      spellCheck={false}
      value={file ? "" : String(value ?? "")}
      placeholder={file ? `Your brand's font (${fontFileName(value)})` : undefined}
      onChange={(event) => onChange(definition.id, event.target.value)}
    />
  );
}

function VariableControl({
  definition,
  value,
  idPrefix,
  onChange: setValue,
  canPickFiles,
}: {
  definition: VariableDefinition;
  value: unknown;
  idPrefix: string;
  onChange: (id: string, value: unknown) => void;
  /** Image variables get "Choose…" (a project on disk); otherwise only a path field. */
  canPickFiles: boolean;
}) {
  const id = `${idPrefix}-${definition.id}`;
  const describedBy = `${id}-help ${id}-issue`;
  const common = { id, name: definition.id, "aria-describedby": describedBy };
  switch (definition.type) {
    case "boolean":
      return (
        <input
          {...common}
          type="checkbox"
          checked={value === true}
          onChange={(event) => setValue(definition.id, event.target.checked)}
        />
      );
    case "enum":
      return (
        <select
          {...common}
          value={String(value ?? "")}
          onChange={(event) => setValue(definition.id, event.target.value)}
        >
          {definition.options?.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      );
    case "number":
      return (
        <input
          {...common}
          type="number"
          inputMode="decimal"
          value={value === undefined ? "" : String(value)}
          {...(definition.min !== undefined ? { min: definition.min } : {})}
          {...(definition.max !== undefined ? { max: definition.max } : {})}
          {...(definition.step !== undefined ? { step: definition.step } : {})}
          onChange={(event) => {
            const text = event.target.value;
            const number = Number(text);
            setValue(definition.id, text.trim() !== "" && Number.isFinite(number) ? number : text);
          }}
        />
      );
    case "color":
      return (
        <span className="color-field">
          <input
            type="color"
            aria-label={`${definition.label} picker`}
            value={/^#[0-9a-f]{6}$/i.test(String(value)) ? String(value) : "#000000"}
            onChange={(event) => setValue(definition.id, event.target.value)}
          />
          <input
            {...common}
            type="text"
            spellCheck={false}
            value={String(value ?? "")}
            onChange={(event) => setValue(definition.id, event.target.value)}
          />
        </span>
      );
    case "image":
      return canPickFiles ? (
        <ImageControl definition={definition} value={value} common={common} onChange={setValue} />
      ) : (
        <ImageTextInput definition={definition} value={value} common={common} onChange={setValue} />
      );
    case "font":
      return (
        <FontTextInput definition={definition} value={value} common={common} onChange={setValue} />
      );
    default:
      return (
        <input
          {...common}
          type="text"
          value={String(value ?? "")}
          {...(definition.type === "string" && definition.maxLength !== undefined
            ? { "data-max-length": definition.maxLength }
            : {})}
          onChange={(event) => setValue(definition.id, event.target.value)}
        />
      );
  }
}

/**
 * The validator's message in a creator's words where it names a schema word: a text longer than
 * its variable's maxLength says how many characters fit (the form refuses to render it).
 */
function issueText(definition: VariableDefinition, value: unknown, issue: VariableIssue): string {
  if (
    definition.type === "string" &&
    issue.code === "out-of-range" &&
    definition.maxLength !== undefined &&
    typeof value === "string"
  ) {
    return `${definition.label} is too long to fit in the video: ${value.length} characters, and at most ${definition.maxLength} fit. Shorten it to render.`;
  }
  return `${definition.label} ${issue.message}`;
}

/** One variable: its label, control, description and the validator's message. */
export function VariableField({
  definition,
  value,
  issue,
  idPrefix,
  onChange,
  canPickFiles,
}: {
  definition: VariableDefinition;
  value: unknown;
  issue: VariableIssue | undefined;
  idPrefix: string;
  onChange: (id: string, value: unknown) => void;
  canPickFiles: boolean;
}) {
  const id = `${idPrefix}-${definition.id}`;
  return (
    <div className={issue ? "field invalid" : "field"}>
      <label htmlFor={id}>{definition.label}</label>
      <VariableControl
        definition={definition}
        value={value}
        idPrefix={idPrefix}
        onChange={onChange}
        canPickFiles={canPickFiles}
      />
      <small id={`${id}-help`} className="muted">
        {[
          definition.description,
          definition.type === "string" && definition.maxLength !== undefined
            ? `${String(value ?? "").length} of ${definition.maxLength} characters`
            : undefined,
        ]
          .filter(Boolean)
          .join(" · ")}
      </small>
      <small id={`${id}-issue`} className="issue" role={issue ? "alert" : undefined}>
        {issue ? issueText(definition, value, issue) : ""}
      </small>
    </div>
  );
}

export function VariablesForm() {
  const state = useVariableState();
  const setValue = useUiStore((s) => s.setValue);
  const setStrict = useUiStore((s) => s.setStrictVariables);
  const resetValues = useUiStore((s) => s.resetValues);
  const valuesFile = useVariableValuesFile();
  if (state.definitions.length === 0)
    return (
      <section className="panel" aria-labelledby="variables-title">
        <h2 id="variables-title">Variables</h2>
        <p className="muted">This composition declares no variables.</p>
      </section>
    );
  return (
    <section className="panel" aria-labelledby="variables-title">
      <div className="panel-head">
        <h2 id="variables-title">Variables</h2>
        <button type="button" onClick={resetValues} disabled={Object.keys(state.own).length === 0}>
          Reset to defaults
        </button>
      </div>
      <div className="actions">
        <label className="file-button">
          Import values…
          <input
            type="file"
            accept="application/json,.json"
            className="sr-only"
            onChange={(event) => {
              const file = event.target.files?.[0];
              if (file) valuesFile.importFile.mutate(file);
              event.target.value = "";
            }}
          />
        </label>
        <button type="button" onClick={() => valuesFile.exportValues(state.resolved)}>
          Export values
        </button>
      </div>
      <StrictToggle checked={state.strict} onChange={setStrict} />
      {valuesFile.importFile.error ? (
        <ErrorNote error={valuesFile.importFile.error} title="Not imported." />
      ) : null}
      <div className="variables">
        {state.definitions.map((definition) => (
          <VariableField
            key={definition.id}
            definition={definition}
            value={state.resolved[definition.id]}
            issue={state.issueFor(definition.id)}
            idPrefix="var"
            onChange={setValue}
            canPickFiles
          />
        ))}
      </div>
      {state.issues.length > 0 ? (
        <p className={state.blocksRender ? "issue" : "warning"}>
          {state.strict
            ? "Fix the values marked above to render (Strict variables is on)."
            : state.blocksRender
              ? "Fix the values marked above to render: a wrong type, choice or range is refused."
              : "These values may not render as intended (Strict variables is off)."}
        </p>
      ) : null}
    </section>
  );
}
