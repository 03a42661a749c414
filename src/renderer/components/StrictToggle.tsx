// The "Strict variables" choice (Variables form, Render again, Render many), with one line saying
// what it changes: on, a value the composition does not declare (e.g. from an imported file) stops
// the render; off, it is passed to the page and the render carries a warning. A wrong type,
// choice or range stops a render either way.
import { useId } from "react";

export function StrictToggle({
  checked,
  onChange,
}: {
  checked: boolean;
  onChange: (strict: boolean) => void;
}) {
  const explanation = useId();
  return (
    <div className="strict-choice">
      <label className="inline">
        <input
          type="checkbox"
          checked={checked}
          aria-describedby={explanation}
          onChange={(event) => onChange(event.target.checked)}
        />
        Strict variables
      </label>
      <p id={explanation} className="hint-line">
        {checked
          ? "On: a value the composition does not declare stops the render."
          : "Off: a value the composition does not declare is passed on, with a warning."}
      </p>
    </div>
  );
}
