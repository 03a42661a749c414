// A finished video played where it is listed (Queue, History): a real <video> of the downloaded
// file (served by the main process) or of a fresh signed URL from the service, with the render's
// thumbnail as its poster. The card holds whether it is open (PlayButton) and shows the video
// below its actions (InlineVideo); the source is asked for only once Play is pressed.
import { useState } from "react";
import { useMediaSource, type MediaTarget } from "../hooks/media";
import { ErrorNote } from "./ErrorNote";

export function usePlayer() {
  const [open, setOpen] = useState(false);
  return { open, toggle: () => setOpen((value) => !value), close: () => setOpen(false) };
}

export function PlayButton({
  open,
  onToggle,
  picture = false,
  label,
}: {
  open: boolean;
  onToggle: () => void;
  /** A still: it is viewed, not played. */
  picture?: boolean;
  /** What the button names for a screen reader when several files sit side by side. */
  label?: string | undefined;
}) {
  return (
    <button
      type="button"
      aria-expanded={open}
      aria-label={label ? `${open ? "Hide" : picture ? "View" : "Play"} ${label}` : undefined}
      onClick={onToggle}
    >
      {open ? (picture ? "Hide picture" : "Hide video") : picture ? "View" : "Play"}
    </button>
  );
}

export function InlineVideo({ target, title }: { target: MediaTarget; title: string }) {
  const media = useMediaSource(target);
  const [failed, setFailed] = useState(false);
  if (media.isPending)
    return (
      <p className="inline-video-state" role="status">
        Loading the video…
      </p>
    );
  if (media.error) return <ErrorNote error={media.error} title="The video cannot be played." />;
  // A GIF is shown as a picture; a PNG sequence is a zip of frames for an editing program.
  const kind = outputKind(media.data.url);
  if (kind === "gif" || kind === "picture")
    return (
      <figure className="inline-video">
        <img src={media.data.url} alt={`${kind === "gif" ? "GIF" : "Picture"} ${title}`} />
      </figure>
    );
  if (kind === "zip")
    return (
      <p className="inline-video-state">
        A zip of PNG frames (with transparency), for an editing or compositing program:{" "}
        <a href={media.data.url} download>
          save the zip
        </a>
        .
      </p>
    );
  return (
    <figure className="inline-video">
      <video
        key={media.data.url}
        src={media.data.url}
        poster={media.data.poster}
        controls
        autoPlay
        playsInline
        preload="metadata"
        aria-label={`Video ${title}`}
        onError={() => setFailed(true)}
      />
      <figcaption className="muted">
        {failed
          ? "This video cannot be played here; open it with another app instead."
          : media.data.source === "file"
            ? "Playing the downloaded file."
            : "Playing from the service (not downloaded here)."}
      </figcaption>
    </figure>
  );
}

/** What a finished output's URL (a signed service URL or a served file) holds, by its name. */
function outputKind(url: string): "gif" | "zip" | "picture" | "video" {
  const path = url.split(/[?#]/)[0]!.toLowerCase();
  if (path.endsWith(".gif")) return "gif";
  if (path.endsWith(".zip")) return "zip";
  if (/\.(png|jpe?g|webp)$/.test(path)) return "picture";
  return "video";
}
