// The header's and Settings' words for where renders run: "on this computer" (the local service
// the app starts itself, or a service at a loopback address) or "on a service" named by its host.
// A new user's local service is not "stopped": it starts on its own with the first render. No
// URL is shown: an address like 127.0.0.1:7733 means nothing to a creator.
import type { ServiceState } from "../shared/ipc";

/** The host of a service URL, or "this computer" for a loopback address. */
export function serviceHostLabel(url: string | undefined): string {
  if (!url) return "a service";
  try {
    const { hostname } = new URL(url);
    // Not the port either: a number a creator did not choose (Settings' "For developers" has it).
    if (/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(hostname)) return "this computer";
    return hostname;
  } catch {
    return "a service";
  }
}

export function serviceLabel(state: ServiceState | undefined): string {
  if (!state) return "Renders: …";
  if (state.mode === "remote") return `Renders on a service: ${serviceHostLabel(state.url)}`;
  if (state.status === "stopped") return "Renders on this computer: starts when you render";
  return `Renders on this computer: ${state.status}`;
}
