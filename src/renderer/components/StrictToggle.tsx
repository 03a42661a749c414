// The "Strict variables" checkbox (Variables form, Render again, Render many): with it on, a
// variable the composition does not declare stops the render too.
export function StrictToggle({
  checked,
  onChange,
  label = "Strict variables",
}: {
  checked: boolean;
  onChange: (strict: boolean) => void;
  label?: string;
}) {
  return (
    <label className="inline">
      <input
        type="checkbox"
        checked={checked}
        onChange={(event) => onChange(event.target.checked)}
      />
      {label}
    </label>
  );
}
