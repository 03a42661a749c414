// An error as the creator should read it: the message, and the hint when the main process gave one
// (a failed call, or an error kept on a queued render or batch as `{code, message, hint}`).
import { IpcCallError, type IpcError } from "../../shared/ipc";

function isIpcError(error: unknown): error is IpcError {
  return (
    !(error instanceof Error) &&
    typeof error === "object" &&
    error !== null &&
    typeof (error as IpcError).code === "string" &&
    typeof (error as IpcError).message === "string"
  );
}

export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  const shown = isIpcError(error) ? new IpcCallError(error) : error;
  const message = shown instanceof Error ? shown.message : String(shown);
  const hint = shown instanceof IpcCallError ? shown.hint : undefined;
  return (
    <div className="error-note" role="alert">
      {title ? <strong>{title} </strong> : null}
      <span>{message}</span>
      {hint ? <p className="hint">{hint}</p> : null}
    </div>
  );
}
