// The captions flags of `svc render` and `svc still` (issue 37): --captions FILE (SRT, WebVTT or
// a JSON word list), --caption-style NAME, the brand look (--caption-font, --caption-color,
// --caption-accent) and, for videos, a soft subtitle track (--caption-track), a sidecar file
// (--caption-sidecar srt|vtt) or no burned-in captions (--no-caption-burn). A broken file is a
// usage error naming its line, before any browser starts.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import {
  CAPTION_STYLES,
  captionLookSchema,
  parseCaptions,
  type CaptionLook,
  type CaptionStyle,
  type CaptionsRequest,
} from "../shared/captions";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { RenderCaptions } from "../engine/contract";
import { UsageError } from "./errors";

export interface CaptionsFlags {
  captions?: string;
  captionStyle?: string;
  captionFont?: string;
  captionColor?: string;
  captionAccent?: string;
  captionTrack?: boolean;
  captionSidecar?: string;
  captionBurn?: boolean;
}

/** Adds the captions flags; `video` adds the soft track, sidecar and burn-in ones. */
export function addCaptionsFlags(command: Command, video: boolean): Command {
  command
    .option("--captions <file>", "captions to draw on the video: an .srt, .vtt or .json word list")
    .option("--caption-style <name>", `how captions look: ${CAPTION_STYLES.join(", ")}`)
    .option("--caption-font <family>", "captions font (default: the composition's, else Inter)")
    .option("--caption-color <color>", "captions text colour, e.g. #ffffff")
    .option("--caption-accent <color>", "colour of the spoken word (karaoke, social)");
  if (video) {
    command
      .option("--caption-track", "also add the captions as a subtitle track viewers can turn off")
      .option("--caption-sidecar <format>", "also write the captions next to the video: srt or vtt")
      .option("--no-caption-burn", "do not draw the captions into the picture");
  }
  return command;
}

/** The render's captions from the flags, or undefined without --captions. */
export function readCaptionsOption(flags: CaptionsFlags): RenderCaptions | undefined {
  if (flags.captions === undefined) {
    const stray = (
      [
        ["--caption-style", flags.captionStyle],
        ["--caption-font", flags.captionFont],
        ["--caption-color", flags.captionColor],
        ["--caption-accent", flags.captionAccent],
        ["--caption-sidecar", flags.captionSidecar],
        ["--caption-track", flags.captionTrack],
      ] as const
    ).find(([, value]) => value !== undefined);
    if (stray) throw new UsageError(`${stray[0]} needs --captions FILE.`);
    return undefined;
  }
  let text: string;
  try {
    text = readFileSync(flags.captions, "utf8");
  } catch {
    throw new UsageError(
      `Cannot read --captions ${flags.captions}.`,
      "Check the path to the .srt, .vtt or .json file.",
    );
  }
  const parsed = parseCaptions(text, flags.captions);
  if (!parsed.ok) {
    throw new UsageError(
      `--captions ${flags.captions}: ${parsed.error.message}`,
      parsed.error.hint,
    );
  }
  const style = (flags.captionStyle ?? "clean") as CaptionStyle;
  if (!CAPTION_STYLES.includes(style)) {
    throw new UsageError(
      `--caption-style must be one of ${CAPTION_STYLES.join(", ")}, not "${flags.captionStyle}".`,
    );
  }
  const lookInput = {
    ...(flags.captionFont !== undefined ? { font: flags.captionFont } : {}),
    ...(flags.captionColor !== undefined ? { color: flags.captionColor } : {}),
    ...(flags.captionAccent !== undefined ? { accent: flags.captionAccent } : {}),
  };
  const look = captionLookSchema.safeParse(lookInput);
  if (!look.success) {
    const issue = look.error.issues[0]!;
    throw new UsageError(`--caption-${String(issue.path[0])}: ${issue.message}.`);
  }
  const sidecar = flags.captionSidecar;
  if (sidecar !== undefined && sidecar !== "srt" && sidecar !== "vtt") {
    throw new UsageError(`--caption-sidecar must be srt or vtt, not "${sidecar}".`);
  }
  const captions: RenderCaptions = { cues: parsed.track.cues, style };
  if (Object.keys(look.data).length > 0) captions.look = look.data as CaptionLook;
  if (flags.captionTrack) captions.softTrack = true;
  if (sidecar) captions.sidecar = sidecar;
  if (flags.captionBurn === false) captions.burnIn = false;
  return captions;
}

/**
 * `svc cloud render --captions FILE`: the file travels in the project zip, so for a local project
 * it must be inside the project folder (checked and parsed here, before anything is uploaded);
 * for --asset-id / --url it is a path inside that project, checked by the service.
 */
export function readCloudCaptionsOption(
  flags: CaptionsFlags,
  projectDir: string | undefined,
): CaptionsRequest | undefined {
  if (flags.captionSidecar !== undefined || flags.captionBurn === false) {
    throw new UsageError(
      flags.captionSidecar !== undefined
        ? "--caption-sidecar is for renders on this computer (svc render)."
        : "--no-caption-burn is for renders on this computer (svc render).",
    );
  }
  if (flags.captions === undefined) {
    readCaptionsOption(flags);
    return undefined;
  }
  let file = flags.captions;
  if (projectDir !== undefined) {
    const captions = readCaptionsOption(flags);
    const inside = relative(resolve(projectDir), resolve(flags.captions));
    if (inside === "" || inside.startsWith("..") || isAbsolute(inside)) {
      throw new UsageError(
        `--captions ${flags.captions} is not inside the project folder ${projectDir}.`,
        "Put the caption file in the project folder: it travels in the project zip.",
      );
    }
    file = inside.split(sep).join("/");
    return {
      file,
      style: captions!.style,
      ...(captions!.look ? { look: captions!.look } : {}),
      ...(flags.captionTrack ? { soft_track: true } : {}),
    };
  }
  const style = (flags.captionStyle ?? "clean") as CaptionStyle;
  if (!CAPTION_STYLES.includes(style)) {
    throw new UsageError(
      `--caption-style must be one of ${CAPTION_STYLES.join(", ")}, not "${flags.captionStyle}".`,
    );
  }
  return { file, style, ...(flags.captionTrack ? { soft_track: true } : {}) };
}
