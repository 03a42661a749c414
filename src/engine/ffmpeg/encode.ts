// Encoding: captured frames stream into FFmpeg's stdin (no per-frame files), one FFmpeg per
// segment of frames, each frame with its timestamp (frame-stream.ts) so that frames which did not
// change are not sent at all and FFmpeg repeats the previous picture. Segment boundaries depend
// only on the frame count, never on the worker count, so one worker and four workers produce the
// same bytes; segments are joined without re-encoding and the audio is mixed in the same final
// pass.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { setPriority } from "node:os";
import { extname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { OutputFormat } from "../../shared/render-options";
import { networkAllows, type NetworkAccess } from "../browser/network";
import { cancelledError, EngineError } from "../errors";
import {
  muxArgs,
  segmentEncoderArgs,
  thumbnailArgs,
  type AudioInput,
  type FrameImageFormat,
  type SegmentEncodeSettings,
} from "./ffmpeg-args";
import { frameCluster, imageSize, streamHeader } from "./frame-stream";

export {
  AUDIO_SAMPLE_RATE,
  placeClips,
  segmentExtension,
  type AudioInput,
  type FrameImageFormat,
  type PlacedClip,
} from "./ffmpeg-args";

export interface SegmentEncoderOptions extends SegmentEncodeSettings {
  ffmpegPath: string;
  imageFormat: FrameImageFormat;
  /**
   * Encoder threads, 1 by default: one worker's capture is several times slower than one encoder
   * thread (bench/README.md), so more threads only add overhead, and a fixed count keeps x264's
   * output the same on every machine.
   */
  threads?: number;
}

/**
 * Segment encoders run below the browsers: capture is the serial, critical path of every worker
 * and the encoders have slack (they keep up at a fraction of a core), so they should take the CPU
 * the capture chain leaves idle rather than delay it (bench/README.md).
 */
const ENCODER_NICENESS = 10;

function lowerPriority(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    setPriority(pid, ENCODER_NICENESS);
  } catch {
    // Not permitted here (or the process already exited): it still encodes, only sooner.
  }
}

/**
 * One FFmpeg process that turns a stream of JPEG/PNG frames into one video segment. `write(null)`
 * says "the same picture as the previous frame": nothing is sent, and FFmpeg's fps filter repeats
 * the previous picture (already decoded, scaled and converted) for that frame, so the output has
 * every frame at a constant rate.
 */
export class SegmentEncoder {
  private readonly child: ChildProcess;
  private readonly done: Promise<void>;
  /** `done` settled either way: the process has exited and been reaped (or never started). */
  private readonly exited: Promise<void>;
  private stderrTail = "";
  private failure: Error | undefined;
  /** Frames written so far (sent or repeated); the next frame's index. */
  private frames = 0;
  private lastImage: Buffer | undefined;
  private lastSentIndex = -1;
  private headerSent = false;

  constructor(private readonly options: SegmentEncoderOptions) {
    const args = segmentEncoderArgs(options);
    this.child = spawn(options.ffmpegPath, args, { stdio: ["pipe", "ignore", "pipe"] });
    lowerPriority(this.child.pid);
    this.child.stderr!.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-4000);
    });
    // Writes after FFmpeg died surface as EPIPE; the exit status below carries the real reason.
    this.child.stdin!.on("error", () => undefined);
    this.done = new Promise((resolve, reject) => {
      this.child.once("error", (error) => {
        this.failure = error;
        reject(
          new EngineError(
            "ffmpeg_not_found",
            `FFmpeg could not start: ${error.message}`,
            "Check that FFmpeg is installed and runs.",
          ),
        );
      });
      this.child.once("exit", (code, signal) => {
        if (code === 0) return resolve();
        const reason =
          this.stderrTail.trim().split("\n").slice(-3).join(" ") || `exit ${code ?? signal}`;
        this.failure = new EngineError(
          "encode_failed",
          `FFmpeg failed to encode: ${reason}`,
          "Check FFmpeg and its encoders.",
        );
        reject(this.failure);
      });
    });
    this.done.catch(() => undefined);
    this.exited = this.done.then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * Queues the next frame, or with null repeats the previous picture; resolves when FFmpeg can
   * take more (back-pressure).
   */
  async write(frame: Buffer | null): Promise<void> {
    if (this.failure) throw this.failure;
    const index = this.frames++;
    if (frame === null) {
      if (!this.lastImage) throw new Error("The first frame of a segment cannot be a repeat.");
      return;
    }
    this.lastImage = frame;
    this.lastSentIndex = index;
    await this.send(index, frame);
  }

  private async send(index: number, image: Buffer): Promise<void> {
    const stdin = this.child.stdin!;
    if (!this.headerSent) {
      // The track says the size of the captured pictures (FFmpeg's decoder fails on pictures
      // smaller than the track size), which only the first picture tells.
      this.headerSent = true;
      const { imageFormat: codec, fps } = this.options;
      stdin.write(streamHeader({ codec, fps, ...imageSize(image, codec) }));
    }
    const [head, body] = frameCluster(index, image);
    stdin.write(head);
    if (stdin.write(body)) return;
    await new Promise<void>((resolve, reject) => {
      const onDrain = () => {
        cleanup();
        resolve();
      };
      const onExit = () => {
        cleanup();
        reject(
          this.failure ??
            new EngineError("encode_failed", "FFmpeg stopped while frames were still coming."),
        );
      };
      const cleanup = () => {
        stdin.off("drain", onDrain);
        this.child.off("exit", onExit);
      };
      stdin.once("drain", onDrain);
      this.child.once("exit", onExit);
    });
  }

  async finish(): Promise<void> {
    // The fps filter fills frames up to the last timestamp it sees: when the segment ends on
    // repeated frames, send the picture once more at the last index so they are all there.
    if (this.lastImage && this.lastSentIndex !== this.frames - 1) {
      this.lastSentIndex = this.frames - 1;
      await this.send(this.frames - 1, this.lastImage);
    }
    this.child.stdin!.end();
    await this.done;
  }

  /** Stops FFmpeg at once; resolves when its process has exited. */
  kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    return this.exited;
  }
}

export interface MuxOptions {
  ffmpegPath: string;
  segments: string[];
  output: string;
  format: OutputFormat;
  durationSeconds: number;
  audio: AudioInput[];
  /**
   * What the render's page may reach: the mix downloads an audio URL only where the page could
   * have fetched it (network.ts), redirects included, so it is no way around a closed network.
   */
  allowNetwork: NetworkAccess;
  workDir: string;
  signal?: AbortSignal;
}

/** Joins the segments without re-encoding and mixes the audio into the final file. */
export async function muxOutput(options: MuxOptions): Promise<void> {
  const listFile = join(options.workDir, "segments.txt");
  await writeFile(
    listFile,
    options.segments.map((s) => `file '${s.replace(/'/g, "'\\''")}'`).join("\n") + "\n",
  );
  const downloaded: string[] = [];
  try {
    const audio = await localAudio(options, downloaded);
    const args = muxArgs({ ...options, audio, listFile });
    await runFfmpeg(options.ffmpegPath, args, options.signal);
  } finally {
    await Promise.all([listFile, ...downloaded].map((file) => rm(file, { force: true })));
  }
}

/**
 * The audio with every http(s) source downloaded into `workDir` first (each URL once; the files
 * are pushed to `downloaded` for the caller to remove). The static FFmpeg svc ships cannot look
 * up a host name (a static glibc has no NSS: it dies of SIGSEGV on any https://host/ input), so
 * a page's <audio> or sounding <video> from a URL would fail the whole render at the mix.
 */
async function localAudio(
  { audio, allowNetwork, workDir, signal }: MuxOptions,
  downloaded: string[],
): Promise<AudioInput[]> {
  const files = new Map<string, string>();
  for (const input of audio) {
    if (!/^https?:\/\//i.test(input.source) || files.has(input.source)) continue;
    const file = join(workDir, `audio-${files.size}${extname(new URL(input.source).pathname)}`);
    downloaded.push(file);
    try {
      const response = await fetchAllowed(input.source, allowNetwork, signal);
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      await pipeline(Readable.fromWeb(response.body as WebReadableStream), createWriteStream(file));
    } catch (error) {
      if (signal?.aborted) throw cancelledError();
      if (error instanceof EngineError) throw error;
      const cause =
        error instanceof Error ? ((error.cause as Error)?.message ?? error.message) : "";
      throw new EngineError(
        "page_error",
        `The composition's audio ${input.source} could not be downloaded: ${cause}`,
        "Put the file in the project and point the page at it, or check that the address can be reached.",
        undefined,
        { url: input.source },
      );
    }
    files.set(input.source, file);
  }
  return audio.map((input) => ({ ...input, source: files.get(input.source) ?? input.source }));
}

/** Redirects followed for one audio file; each new address is checked like the first. */
const MAX_AUDIO_REDIRECTS = 5;

/**
 * Fetches `url` only where the page may reach it, following redirects by hand: fetch's own
 * would go wherever an allowed server points (a loopback admin port, cloud metadata).
 */
async function fetchAllowed(
  url: string,
  access: NetworkAccess,
  signal: AbortSignal | undefined,
): Promise<Response> {
  let current = url;
  for (let redirects = 0; ; redirects++) {
    if (!networkAllows(access, current)) {
      throw new EngineError(
        "page_error",
        current === url
          ? `The composition's audio ${url} was not downloaded: this render may not reach that address.`
          : `The composition's audio ${url} was not downloaded: it redirects to ${current}, which this render may not reach.`,
        "Put the file in the project and point the page at it.",
        undefined,
        { url },
      );
    }
    const response = await fetch(current, { signal: signal ?? null, redirect: "manual" });
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location) return response;
    await response.body?.cancel();
    if (redirects >= MAX_AUDIO_REDIRECTS) throw new Error("too many redirects");
    current = new URL(location, current).href;
  }
}

export async function extractThumbnail(
  ffmpegPath: string,
  video: string,
  atSeconds: number,
  output: string,
  signal?: AbortSignal,
): Promise<void> {
  await runFfmpeg(ffmpegPath, thumbnailArgs(video, atSeconds, output), signal);
}

export function runFfmpeg(ffmpegPath: string, args: string[], signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on(
      "data",
      (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)),
    );
    const onAbort = () => child.kill("SIGKILL");
    signal?.addEventListener("abort", onAbort, { once: true });
    child.once("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(
        new EngineError(
          "ffmpeg_not_found",
          `FFmpeg could not start: ${error.message}`,
          "Check that FFmpeg is installed and runs.",
        ),
      );
    });
    child.once("exit", (code) => {
      signal?.removeEventListener("abort", onAbort);
      if (code === 0) return resolve();
      if (signal?.aborted) return reject(cancelledError());
      const reason = stderr.trim().split("\n").slice(-3).join(" ") || `exit ${code}`;
      reject(
        new EngineError(
          "encode_failed",
          `FFmpeg failed: ${reason}`,
          "Check FFmpeg and its encoders.",
        ),
      );
    });
  });
}
