// Downloading a finished render to a local file: the bytes go to a temp file beside the target
// and are renamed into place only when complete, so an interrupted or failed download never
// leaves a partial file under the final name. A dropped connection resumes with a Range request;
// an expired signed URL (403) is replaced by a fresh one from the render record; the byte count
// must match Content-Length, or the download fails as truncated. A temp file left by a process
// that was killed mid-download (no chance to clean up) is removed when that target is downloaded
// again, so a resumed download leaves nothing half-written behind.
import { randomBytes } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { HTTPError, RequestError } from "got";
import type { RenderRecord } from "../shared/api";
import { extraOutputPath } from "../shared/outputs";
import { FILE_EXTENSIONS } from "../shared/render-options";
import { isTransient, toClientError, type ApiClient } from "./api-client";
import { clientRetryDelay, sleep, type Sleep } from "./backoff";
import { ClientError, interruptedError } from "./errors";

export interface DownloadOptions {
  signal?: AbortSignal | undefined;
  onProgress?: (bytes: number, totalBytes: number | undefined) => void;
  attempts?: number;
  backoffMs?: number;
  sleep?: Sleep;
  /** One of a render's several outputs (record.outputs[i].url); default: the render's video. */
  outputIndex?: number;
}

/** `renders/<render_id>.<ext>` under the current folder, unless an output path is given. */
export function defaultOutputPath(
  record: Pick<RenderRecord, "render_id" | "format">,
  cwd = process.cwd(),
): string {
  return resolve(cwd, "renders", `${record.render_id}.${FILE_EXTENSIONS[record.format]}`);
}

/**
 * One file of a render's record: `outputs[index]`, or (index 0 of a record from a service without
 * several outputs) the render's own video.
 */
export function recordOutput(
  record: RenderRecord,
  index: number,
): { url: string | null; thumbnail_url: string | null } | undefined {
  const listed = record.outputs?.find((output) => output.index === index);
  if (listed) return listed;
  return index === 0
    ? { url: record.video_url ?? null, thumbnail_url: record.thumbnail_url ?? null }
    : undefined;
}

export async function downloadRender(
  client: ApiClient,
  record: RenderRecord,
  output: string,
  options: DownloadOptions = {},
): Promise<{ path: string; sizeBytes: number }> {
  const { signal } = options;
  const wait = options.sleep ?? sleep;
  const attempts = options.attempts ?? 6;
  const index = options.outputIndex ?? 0;
  const urlOf = (r: RenderRecord): string | null =>
    index === 0 ? r.video_url : (r.outputs[index]?.url ?? null);
  if (record.status !== "completed" || !urlOf(record)) {
    throw new ClientError(
      "render_not_completed",
      `Render ${record.render_id} is ${record.status}; there is no video to download.`,
      record.status === "failed"
        ? "The render failed; render again after fixing the composition."
        : "Wait for the render to finish, then download it.",
      { params: { renderId: record.render_id, status: record.status } },
    );
  }
  const target = resolve(output);
  await mkdir(dirname(target), { recursive: true });
  await removeStaleParts(target);
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(4).toString("hex")}.part`);
  let url = urlOf(record)!;
  let total: number | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      const offset = await stat(temp).then(
        (info) => info.size,
        () => 0,
      );
      if (total !== undefined && offset === total) break;
      try {
        total = await fetchInto(client, url, temp, offset, total, options);
        const size = (await stat(temp)).size;
        if (total !== undefined && size !== total) {
          throw new ClientError(
            "download_truncated",
            `The download of ${record.render_id} stopped at ${size} of ${total} bytes.`,
            "Try the download again.",
            { params: { renderId: record.render_id, topic: "download" } },
          );
        }
        break;
      } catch (error) {
        if (signal?.aborted) throw interruptedError();
        const expired = error instanceof HTTPError && error.response.statusCode === 403;
        // A body cut short surfaces as a plain stream error: a network failure like any other.
        const failure = expired
          ? undefined
          : error instanceof ClientError ||
              error instanceof HTTPError ||
              error instanceof RequestError
            ? toClientError(error, client.baseUrl, signal)
            : new ClientError(
                "network_error",
                `The download of ${record.render_id} was cut off (${(error as Error).message}).`,
                "Try the download again.",
                { params: { renderId: record.render_id, topic: "download" } },
              );
        const retryable =
          expired ||
          (failure !== undefined &&
            (isTransient(failure) || failure.code === "download_truncated"));
        if (attempt >= attempts || !retryable)
          throw failure ?? toClientError(error, client.baseUrl, signal);
        if (expired) {
          // Signed URLs are short-lived: ask the service for a fresh one.
          const fresh = await client.getRender(record.render_id, signal);
          const freshUrl = urlOf(fresh);
          if (!freshUrl) throw toClientError(error, client.baseUrl, signal);
          url = freshUrl;
        } else {
          await wait(clientRetryDelay(attempt, options.backoffMs ?? 1000), signal);
        }
      }
    }
    await rename(temp, target);
    return { path: target, sizeBytes: total ?? (await stat(target)).size };
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * GETs from `offset` into the temp file; returns the full size of the object. Whatever arrived
 * before a failure is flushed to the temp file, so the next attempt resumes after it.
 */
function fetchInto(
  client: ApiClient,
  url: string,
  temp: string,
  offset: number,
  knownTotal: number | undefined,
  options: DownloadOptions,
): Promise<number | undefined> {
  return new Promise((resolvePromise, rejectPromise) => {
    const request = client.transport.stream(url, {
      headers: offset > 0 ? { range: `bytes=${offset}-` } : {},
      retry: { limit: 0 },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    let total = knownTotal;
    let received = offset;
    let file: WriteStream | undefined;
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      const done = () => (error ? rejectPromise(error) : resolvePromise(total));
      if (!file) return done();
      file.once("close", done);
      file.once("error", (fileError) => {
        if (!error) error = fileError;
      });
      file.end();
    };
    request.on(
      "response",
      (response: { statusCode: number; headers: Record<string, string | undefined> }) => {
        let append = false;
        if (response.statusCode === 206) {
          const match = /bytes (\d+)-\d+\/(\d+)/.exec(response.headers["content-range"] ?? "");
          if (match && Number(match[1]) === offset) {
            total = Number(match[2]);
            append = true;
          }
        }
        if (!append) {
          // The whole object: start the file over.
          received = 0;
          const length = Number(response.headers["content-length"]);
          if (Number.isFinite(length)) total = length;
        }
        file = createWriteStream(temp, { flags: append ? "a" : "w" });
        file.on("error", (error) => {
          request.destroy();
          settle(error);
        });
      },
    );
    request.on("data", (chunk: Buffer) => {
      if (!file) return;
      received += chunk.length;
      options.onProgress?.(received, total);
      if (!file.write(chunk)) {
        request.pause();
        file.once("drain", () => request.resume());
      }
    });
    request.once("end", () => settle());
    request.once("error", (error) => settle(error));
  });
}

/** Temp files of an earlier download of `target` whose process died before it could clean up. */
async function removeStaleParts(target: string): Promise<void> {
  const prefix = `.${basename(target)}.`;
  const names = await readdir(dirname(target)).catch(() => []);
  await Promise.all(
    names
      .filter(
        (name) => name.startsWith(prefix) && /^[0-9a-f]{8}\.part$/.test(name.slice(prefix.length)),
      )
      .map((name) => rm(join(dirname(target), name), { force: true })),
  );
}

/** A file of a render, downloaded. */
export interface DownloadedOutput {
  index: number;
  path: string;
  sizeBytes: number;
}

/**
 * Where a render's outputs after the first go: beside the main file `mainPath`, named by what
 * tells them apart (shared/outputs.ts: `…-9x16.mp4`, `…-2.5s.png`); a path in `known` (decided
 * before, e.g. by a download that is resuming) is kept.
 */
export function otherOutputPaths(
  record: RenderRecord,
  mainPath: string,
  known: ReadonlyMap<number, string> = new Map(),
): Array<{ index: number; path: string }> {
  const main = record.outputs[0] ?? record;
  const taken: string[] = [];
  return record.outputs.slice(1).map((output) => {
    const path = known.get(output.index) ?? extraOutputPath(mainPath, main, output, taken);
    taken.push(path);
    return { index: output.index, path };
  });
}

/**
 * Downloads the given outputs of a render, one after the other, each to its decided path (see
 * otherOutputPaths); `onSaved` hears of each file as soon as it is in place.
 */
export async function downloadOutputs(
  client: ApiClient,
  record: RenderRecord,
  files: ReadonlyArray<{ index: number; path: string }>,
  options: Pick<DownloadOptions, "signal" | "onProgress"> & {
    onSaved?: (file: DownloadedOutput) => void | Promise<void>;
  } = {},
): Promise<DownloadedOutput[]> {
  const saved: DownloadedOutput[] = [];
  for (const { index, path } of files) {
    const file = await downloadRender(client, record, path, {
      signal: options.signal,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      outputIndex: index,
    });
    const downloaded = { index, path: file.path, sizeBytes: file.sizeBytes };
    saved.push(downloaded);
    await options.onSaved?.(downloaded);
  }
  return saved;
}
