// The engine's public contract: what renderComposition takes and returns.
import type { PageCaptions } from "../shared/captions";
import type { RenderSettingFields } from "../shared/render-options";
import type { VariableValues } from "../shared/variables";
import type { ResolvedLibrary } from "../node/index";
import type { NetworkAccess } from "./browser/network";

export interface RenderProgress {
  /** Frames captured and handed to the encoder so far. */
  framesDone: number;
  framesTotal: number;
  /** Capture+encode rate over the last second, frames per second. */
  fps: number;
  /** Estimated seconds left, or undefined before the rate is known. */
  etaSeconds: number | undefined;
  stage: "preparing" | "capturing" | "finishing";
}

/** Render settings (shared schema; the aspect ratio defaults to data-width/data-height). */
export interface RenderCompositionOptions extends Partial<RenderSettingFields> {
  /** Folder served to the page; no path may escape it. */
  projectDir: string;
  /** Entry HTML file, relative to projectDir. Default "index.html". */
  composition?: string;
  /** Where the video goes. Written through a temp file and renamed, so it is whole or absent. */
  output: string;
  variables?: VariableValues;
  strictVariables?: boolean;
  /** Browser pages/processes capturing in parallel; "auto" picks from the CPU count. */
  workers?: number | "auto";
  /**
   * Let the page reach the network (local renders: true; the service: false), or only the listed
   * origins. Default true.
   */
  allowNetwork?: NetworkAccess;
  /**
   * Render at `aspectRatio`'s viewport even when the composition was authored at another one (the
   * page adapts with CSS, docs/composition-format.md). Without it a requested aspect ratio that
   * differs from data-width/data-height is refused (aspect_mismatch), as it always was.
   */
  adaptAspectRatio?: boolean;
  /** Captions: burned in (unless `burnIn` is false), a soft track, a sidecar file. */
  captions?: RenderCaptions;
  /** Write a JPEG thumbnail next to the output (default true). */
  thumbnail?: boolean;
  /** Seconds to wait for fonts, images and media before frame 0. Default 30. */
  readyTimeoutSeconds?: number;
  signal?: AbortSignal;
  onProgress?: (progress: RenderProgress) => void;
}

/** Captions of a render (issue 37; docs/composition-format.md, "Captions"). */
export interface RenderCaptions extends PageCaptions {
  /** Draw them into the picture (default true). */
  burnIn?: boolean;
  /** Add a subtitle stream to mp4/mov (mov_text) or webm (WebVTT). Default false. */
  softTrack?: boolean;
  /** Write `<output>.srt` or `<output>.vtt` next to the video. */
  sidecar?: "srt" | "vtt";
}

export interface RenderResult {
  outputPath: string;
  thumbnailPath: string | undefined;
  durationSeconds: number;
  frames: number;
  /**
   * Frames where nothing on screen changed: the previous picture was repeated without a new
   * capture (faster; the video is the same).
   */
  repeatedFrames: number;
  width: number;
  height: number;
  /** The captions sidecar written next to the video (`captions.sidecar`). */
  captionsPath?: string;
  warnings: string[];
  /**
   * The npm libraries that answered the page's CDN URLs: the version each tag or range resolved
   * to (pinned in the library cache), so the render can be repeated with the same files.
   */
  libraries?: ResolvedLibrary[];
}
