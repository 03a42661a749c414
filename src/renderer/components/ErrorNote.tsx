// An error as the creator should read it: the message, and the hint when the main process gave one.
import { IpcCallError } from "../../shared/ipc";

export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof IpcCallError ? error.hint : undefined;
  return (
    <div className="error-note" role="alert">
      {title ? <strong>{title} </strong> : null}
      <span>{message}</span>
      {hint ? <p className="hint">{hint}</p> : null}
    </div>
  );
}
