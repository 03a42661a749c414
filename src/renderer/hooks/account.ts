// Sign-in state and the settings, both from the main process; a change answers the new value,
// which replaces the cached one. A browser or device sign-in ends later: the main process pushes
// the new status as an `auth` event, written straight into the cache.
import { useEffect } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { AuthStatus, DesktopSettings } from "../../shared/ipc";
import { desktopApi } from "../transport";

export function useAuthStatus() {
  const client = useQueryClient();
  useEffect(
    () =>
      desktopApi().on("auth", (status: AuthStatus) => {
        client.setQueryData(["auth.status"], status);
        void client.invalidateQueries({ queryKey: ["renders.list"] });
      }),
    [client],
  );
  return useQuery({ queryKey: ["auth.status"], queryFn: () => desktopApi()["auth.status"]() });
}

function useAuthChange<T>(change: (input: T) => Promise<AuthStatus>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: change,
    onSuccess: (status) => {
      client.setQueryData(["auth.status"], status);
      void client.invalidateQueries({ queryKey: ["renders.list"] });
    },
  });
}

export const useApiKeyLogin = () =>
  useAuthChange((apiKey: string) => desktopApi()["auth.login"]({ method: "api-key", apiKey }));
export const useLogout = () => useAuthChange(() => desktopApi()["auth.logout"]());
/** Starts a browser or device sign-in; answers once the page URL or the code is known. */
export const useSignInStart = () =>
  useAuthChange((method: "browser" | "device") => desktopApi()["auth.login"]({ method }));
export const useSignInCancel = () => useAuthChange(() => desktopApi()["auth.cancel"]());

export function useSettings() {
  return useQuery({ queryKey: ["settings.get"], queryFn: () => desktopApi()["settings.get"]() });
}

export function useUpdateSettings() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (change: Partial<DesktopSettings>) => desktopApi()["settings.set"](change),
    onSuccess: (settings) => {
      client.setQueryData(["settings.get"], settings);
      void client.invalidateQueries({ queryKey: ["auth.status"] });
      void client.invalidateQueries({ queryKey: ["service.state"] });
      void client.invalidateQueries({ queryKey: ["renders.list"] });
    },
  });
}
