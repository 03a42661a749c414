// The header's words for the render service the app uses. A local service nobody has needed yet
// is not "stopped" to a new user: it starts on its own with the first render.
import type { ServiceState } from "../shared/ipc";

export function serviceLabel(state: ServiceState | undefined): string {
  if (!state) return "Service: …";
  if (state.mode === "remote") return `Service: ${state.url ?? "remote"}`;
  if (state.status === "stopped") return "Local service: starts when you render";
  return `Local service: ${state.status}`;
}
