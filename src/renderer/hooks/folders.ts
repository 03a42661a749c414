// Choosing a project folder: the native dialog in Electron; in web mode the main process answers
// "browse" and the in-app folder browser lists folders under the configured root.
import { useState } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import { desktopApi } from "../transport";
import { useUiStore } from "../store";

export function usePickFolder() {
  const openProject = useUiStore((state) => state.openProject);
  const setOpen = useUiStore((state) => state.setFolderBrowserOpen);
  return useMutation({
    mutationFn: () => desktopApi()["host.pickFolder"](),
    onSuccess: (result) => {
      if (result.kind === "picked") openProject(result.path);
      if (result.kind === "browse") setOpen(true);
    },
  });
}

/** The folder browser's current folder and its listing. */
export function useFolderBrowser() {
  const [path, setPath] = useState<string | undefined>(undefined);
  const listing = useQuery({
    queryKey: ["host.listFolders", path],
    queryFn: () => desktopApi()["host.listFolders"](path ? { path } : {}),
    retry: false,
  });
  return { path, open: setPath, listing };
}
