// Captions of a /v3 render (issue 37): the caption file named in `captions.file` is read out of
// the project zip and parsed at submit, so a missing or broken file is a 400 naming its line
// before anything is queued or charged; the worker gets the parsed cues with the render's row.
import { parseCaptions, CAPTIONS_MAX_CHARS } from "../../shared/captions";
import type { ParsedRenderRequest } from "../../shared/api";
import type { RenderCaptions } from "../../engine/contract";
import type { ServiceContext } from "../context";
import { ApiError } from "../errors";
import { ArchiveError, checkEntryName, readZipEntry } from "../assets/zip-inspect";

export async function readRenderCaptions(
  ctx: ServiceContext,
  storageKey: string,
  request: NonNullable<ParsedRenderRequest["captions"]>,
): Promise<RenderCaptions> {
  const look = {
    style: request.style,
    ...(request.look ? { look: request.look } : {}),
    ...(request.burn_in === false ? { burnIn: false } : {}),
    ...(request.soft_track ? { softTrack: true } : {}),
  };
  // Cues given inline were checked by the request's schema.
  if (request.cues) return { cues: request.cues, ...look };
  let name: string;
  try {
    name = checkEntryName(request.file ?? "").replace(/^\.\//, "");
    if (name.endsWith("/")) throw new Error("a folder");
  } catch {
    throw new ApiError(
      "invalid_parameter",
      `captions.file "${request.file}" must be a relative path of a file inside the project`,
      "captions.file",
    );
  }
  const local = await ctx.store.toLocalFile(storageKey);
  let bytes: Buffer | undefined;
  try {
    // UTF-8 takes at most 4 bytes a character.
    bytes = await readZipEntry(local.path, name, CAPTIONS_MAX_CHARS * 4);
  } catch (error) {
    if (error instanceof ArchiveError)
      throw new ApiError("invalid_parameter", `captions.file: ${error.message}`, "captions.file");
    throw error;
  } finally {
    await local.release();
  }
  if (!bytes) {
    throw new ApiError(
      "invalid_parameter",
      `the project has no caption file "${name}"; put it in the project folder before uploading`,
      "captions.file",
    );
  }
  const parsed = parseCaptions(bytes.toString("utf8"), name);
  if (!parsed.ok) {
    throw new ApiError(
      "invalid_parameter",
      `captions.file ${name}: ${parsed.error.message} ${parsed.error.hint}`,
      "captions.file",
    );
  }
  return { cues: parsed.track.cues, ...look };
}
