// Applies the chosen theme to <html data-theme>, following the system when the choice is "system".
import { useEffect, useSyncExternalStore } from "react";
import { useUiStore } from "../store";

const DARK_QUERY = "(prefers-color-scheme: dark)";

function subscribe(onChange: () => void): () => void {
  const query = window.matchMedia(DARK_QUERY);
  query.addEventListener("change", onChange);
  return () => query.removeEventListener("change", onChange);
}

export function useAppliedTheme(): "light" | "dark" {
  const choice = useUiStore((state) => state.theme);
  const systemDark = useSyncExternalStore(subscribe, () => window.matchMedia(DARK_QUERY).matches);
  const theme = choice === "system" ? (systemDark ? "dark" : "light") : choice;
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  return theme;
}
