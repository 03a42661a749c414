// Choosing a project folder: the native dialog in Electron; in web mode the main process answers
// "browse" and the in-app folder browser lists the folders of the allowed places (home and the
// user's own drives), reopening where the creator last was. A folder can
// also be dropped on the window: Electron's preload knows a dropped folder's path; in web mode the
// drop must carry it as text (a file:// URI or an absolute path), and the folder browser's listing
// checks it is inside the browser's root before it is opened.
import { useEffect, useState } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import type { DroppedFiles } from "../../shared/ipc";
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

/**
 * The folder browser's current folder (first: where it was last, else home) and its listing; ""
 * is the list of places. A remembered folder that is gone falls back to home.
 */
export function useFolderBrowser() {
  const remembered = useUiStore((state) => state.folderBrowserPath);
  const setRemembered = useUiStore((state) => state.setFolderBrowserPath);
  const [path, setPath] = useState<string | undefined>(remembered);
  const listing = useQuery({
    queryKey: ["host.listFolders", path],
    queryFn: async () => {
      const api = desktopApi();
      if (path === "") return api["host.listFolders"]({ places: true });
      try {
        return await api["host.listFolders"](path ? { path } : {});
      } catch (error) {
        if (path === undefined || path !== remembered) throw error;
        setRemembered(undefined);
        return api["host.listFolders"]({});
      }
    },
    retry: false,
  });
  useEffect(() => {
    if (listing.data?.path) setRemembered(listing.data.path);
  }, [listing.data?.path, setRemembered]);
  return { path, open: setPath, listing };
}

declare global {
  interface Window {
    svcDroppedFiles?: DroppedFiles;
  }
}

/** What a drop carries that could be a folder path. */
export interface DropData {
  files: File[];
  uriList: string;
  text: string;
}

/** The absolute path in a `file://` URI or a plain absolute path, else undefined. */
export function pathFromDropText(text: string): string | undefined {
  const line = text
    .split(/\r?\n/)
    .map((value) => value.trim())
    .find((value) => value !== "" && !value.startsWith("#"));
  if (!line) return undefined;
  if (/^file:/i.test(line)) {
    try {
      const url = new URL(line);
      if (url.host && url.host !== "localhost") return undefined;
      const path = decodeURIComponent(url.pathname);
      // file:///C:/x -> C:/x on Windows
      return /^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path;
    } catch {
      return undefined;
    }
  }
  return line.startsWith("/") || /^[A-Za-z]:[\\/]/.test(line) ? line : undefined;
}

export const NO_DROPPED_PATH =
  "That drop has no folder path. Drag the project folder itself from your file manager, or use Choose folder….";

/** Opens a dropped folder as the project, or fails with a one-line reason. */
export function useDropFolder() {
  const openProject = useUiStore((state) => state.openProject);
  return useMutation({
    mutationFn: async (drop: DropData) => {
      const fromFile = drop.files[0] ? window.svcDroppedFiles?.pathFor(drop.files[0]) : undefined;
      if (fromFile) return fromFile;
      const path = pathFromDropText(drop.uriList) ?? pathFromDropText(drop.text);
      if (!path) throw new Error(NO_DROPPED_PATH);
      // Web mode: only folders the folder browser may show (its answer is the resolved path).
      return window.svcDroppedFiles
        ? path
        : ((await desktopApi()["host.listFolders"]({ path })).path ?? path);
    },
    onSuccess: (path) => openProject(path),
  });
}
