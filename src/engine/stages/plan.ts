// How a render is cut: fixed segments (the unit a worker captures and FFmpeg encodes) and chunks
// (runs of whole segments that different machines render). Pure arithmetic on the frame count and
// fps, so the render service can plan a render's chunks without loading the engine.

/**
 * Segment length in frames: a function of the frame count and fps only, never of the worker
 * count, so any number of workers encodes the same segments and the output is identical.
 */
export function segmentLength(frames: number, fps: number): number {
  return Math.max(1, Math.min(Math.max(fps, Math.ceil(frames / 16)), fps * 4));
}

export interface Chunk {
  index: number;
  firstSegment: number;
  segmentCount: number;
  firstFrame: number;
  frameCount: number;
}

export interface ChunkSettings {
  /** Target seconds of video per chunk (rounded to whole segments), when workers are not counted. */
  chunkSeconds: number;
  /** The most chunks one render is cut into. */
  maxChunks: number;
  /**
   * Render workers alive now: when given, the render is cut into about `chunksPerWorker` chunks
   * per worker (chunkSeconds is then not used), each at least `minChunkFrames` long, so a long
   * render spreads over every machine and a short one is not cut finer than is worth a chunk's
   * fixed cost.
   */
  liveWorkers?: number;
  chunksPerWorker?: number;
  minChunkFrames?: number;
}

/** The chunks of a render of `frames` frames at `fps`; one chunk when it is short. */
export function planChunks(frames: number, fps: number, settings: ChunkSettings): Chunk[] {
  const length = segmentLength(frames, fps);
  const segments = Math.ceil(frames / length);
  const live = settings.liveWorkers ?? 0;
  const wanted =
    live > 0
      ? Math.max(
          Math.ceil(segments / (live * (settings.chunksPerWorker ?? 2))),
          Math.ceil((settings.minChunkFrames ?? 1) / length),
        )
      : Math.max(1, Math.round((settings.chunkSeconds * fps) / length));
  const perChunk = Math.max(wanted, Math.ceil(segments / Math.max(1, settings.maxChunks)));
  const chunks: Chunk[] = [];
  for (let first = 0; first < segments; first += perChunk) {
    const count = Math.min(perChunk, segments - first);
    const firstFrame = first * length;
    chunks.push({
      index: chunks.length,
      firstSegment: first,
      segmentCount: count,
      firstFrame,
      frameCount: Math.min(frames, (first + count) * length) - firstFrame,
    });
  }
  return chunks;
}

/** A frame that shows the composition in full swing (as a whole render's thumbnail does). */
export function representativeFrame(frames: number): number {
  return Math.min(frames - 1, Math.floor(frames * 0.4));
}

/** Segments one worker has still to start: [next, end). */
export interface SegmentRun {
  next: number;
  end: number;
}

/**
 * Work stealing between the workers of one render. Workers start on contiguous blocks, but a
 * block's cost depends on the page (an intro that animates, an ending that holds still), so a
 * worker whose block is done takes the upper half of the segments not yet started by the worker
 * with the most left, when that worker has at least `minimum` of them (the thief pays a catch-up,
 * sometimes a fresh browser, so a lone segment stays with its owner). The thief's run (changed in
 * place) becomes the stolen range; returns false when there is nothing worth taking.
 */
export function stealSegments(runs: SegmentRun[], thief: number, minimum = 2): boolean {
  const least = Math.max(1, minimum);
  let victim = -1;
  for (let i = 0; i < runs.length; i++) {
    if (i === thief) continue;
    const left = runs[i]!.end - runs[i]!.next;
    if (left >= least && (victim < 0 || left > runs[victim]!.end - runs[victim]!.next)) {
      victim = i;
    }
  }
  if (victim < 0) return false;
  const from = runs[victim]!;
  const split = from.end - Math.max(1, Math.floor((from.end - from.next) / 2));
  runs[thief]!.next = split;
  runs[thief]!.end = from.end;
  from.end = split;
  return true;
}
