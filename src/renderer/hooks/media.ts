// Inline playback: where a finished video plays from (`media.url`: the downloaded file through
// the app's media server, or a fresh signed URL of the service) and its thumbnail. Asked for when
// the creator presses Play, and kept briefly: signed URLs expire.
import { useQuery } from "@tanstack/react-query";
import type { IpcInput } from "../../shared/ipc";
import { desktopApi } from "../transport";

export type MediaTarget = IpcInput<"media.url">;

export function useMediaSource(target: MediaTarget) {
  return useQuery({
    queryKey: ["media.url", target],
    queryFn: () => desktopApi()["media.url"](target),
    retry: false,
    staleTime: 60_000,
    gcTime: 60_000,
  });
}

/** The example projects that ship with the app ("Try an example"). */
export function useExamples() {
  return useQuery({
    queryKey: ["app.examples"],
    queryFn: () => desktopApi()["app.examples"](),
    staleTime: Infinity,
  });
}
