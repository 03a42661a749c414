// Sign-in state and the settings, both from the main process; a change answers the new value,
// which replaces the cached one.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { AuthStatus, DesktopSettings } from "../../shared/ipc";
import { desktopApi } from "../transport";

export function useAuthStatus() {
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
