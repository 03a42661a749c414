// Every list's three other states: loading, error (with a retry) and empty.
import type { ReactNode } from "react";
import { ErrorNote } from "./ErrorNote";

export interface ListStateProps {
  label: string;
  isPending: boolean;
  error: unknown;
  isEmpty: boolean;
  empty: ReactNode;
  onRetry?: () => void;
  children: ReactNode;
}

export function ListState(props: ListStateProps) {
  if (props.isPending)
    return (
      <p className="list-state" role="status" aria-busy="true">
        Loading {props.label}…
      </p>
    );
  if (props.error)
    return (
      <div className="list-state">
        <ErrorNote error={props.error} title={`Could not load ${props.label}.`} />
        {props.onRetry ? (
          <button type="button" onClick={props.onRetry}>
            Try again
          </button>
        ) : null}
      </div>
    );
  if (props.isEmpty) return <div className="list-state empty">{props.empty}</div>;
  return <>{props.children}</>;
}
