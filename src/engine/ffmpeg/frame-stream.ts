// The stream of captured frames to one segment's FFmpeg: a minimal live Matroska file (EBML
// header, a segment of unknown size, one video track, one cluster per frame) that carries each
// JPEG/PNG frame with its own timestamp, the frame's index in the segment. A frame that did not
// change is simply not sent: FFmpeg's fps filter repeats the previous picture up to the next
// timestamp, so the output keeps a constant frame rate and exact timing while held frames skip
// transport, JPEG/PNG decoding and scaling (bench/README.md has the measurements). image2pipe,
// the plain alternative, has no timestamps, so every frame would have to be sent and decoded.

/** EBML element IDs used here (Matroska specification). */
const ID = {
  EBML: [0x1a, 0x45, 0xdf, 0xa3],
  EBMLVersion: [0x42, 0x86],
  EBMLReadVersion: [0x42, 0xf7],
  EBMLMaxIDLength: [0x42, 0xf2],
  EBMLMaxSizeLength: [0x42, 0xf3],
  DocType: [0x42, 0x82],
  DocTypeVersion: [0x42, 0x87],
  DocTypeReadVersion: [0x42, 0x85],
  Segment: [0x18, 0x53, 0x80, 0x67],
  Info: [0x15, 0x49, 0xa9, 0x66],
  TimestampScale: [0x2a, 0xd7, 0xb1],
  MuxingApp: [0x4d, 0x80],
  WritingApp: [0x57, 0x41],
  Tracks: [0x16, 0x54, 0xae, 0x6b],
  TrackEntry: [0xae],
  TrackNumber: [0xd7],
  TrackUID: [0x73, 0xc5],
  TrackType: [0x83],
  FlagLacing: [0x9c],
  CodecID: [0x86],
  CodecPrivate: [0x63, 0xa2],
  Video: [0xe0],
  PixelWidth: [0xb0],
  PixelHeight: [0xba],
  Cluster: [0x1f, 0x43, 0xb6, 0x75],
  Timestamp: [0xe7],
  SimpleBlock: [0xa3],
} as const;

/** Size of an element whose end is not known yet (a live segment). */
const UNKNOWN_SIZE = Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

function sizeVint(size: number): Buffer {
  for (let length = 1; length <= 8; length++) {
    // All-ones is reserved for "unknown"; stay below it.
    if (size < 2 ** (7 * length) - 1) {
      const bytes = Buffer.alloc(length);
      let rest = size;
      for (let i = length - 1; i >= 0; i--) {
        bytes[i] = rest % 256;
        rest = Math.floor(rest / 256);
      }
      bytes[0]! |= 0x80 >> (length - 1);
      return bytes;
    }
  }
  throw new RangeError(`EBML element too large: ${size} bytes`);
}

function element(id: readonly number[], ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  return Buffer.concat([Buffer.from(id), sizeVint(body.length), body]);
}

function uint(id: readonly number[], value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  do {
    bytes.unshift(rest % 256);
    rest = Math.floor(rest / 256);
  } while (rest > 0);
  return element(id, Buffer.from(bytes));
}

function text(id: readonly number[], value: string): Buffer {
  return element(id, Buffer.from(value, "ascii"));
}

export type FrameCodec = "jpeg" | "png";

/** A PNG track is a VfW-style track: a BITMAPINFOHEADER naming the MPNG FourCC. */
function pngCodecPrivate(width: number, height: number): Buffer {
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(width, 4);
  header.writeInt32LE(height, 8);
  header.writeUInt16LE(1, 12);
  header.writeUInt16LE(32, 14);
  header.write("MPNG", 16, "ascii");
  return header;
}

/** Width and height of a JPEG (from its start-of-frame marker) or PNG (from IHDR). */
export function imageSize(image: Buffer, codec: FrameCodec): { width: number; height: number } {
  if (codec === "png") return { width: image.readUInt32BE(16), height: image.readUInt32BE(20) };
  let offset = 2;
  while (offset + 9 < image.length) {
    if (image[offset] !== 0xff) break;
    const marker = image[offset + 1]!;
    const length = image.readUInt16BE(offset + 2);
    // SOF0-SOF15, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      return { height: image.readUInt16BE(offset + 5), width: image.readUInt16BE(offset + 7) };
    }
    offset += 2 + length;
  }
  throw new Error("Not a JPEG with a frame header.");
}

/**
 * Timestamps count frames: one tick lasts 1/fps s, rounded to whole nanoseconds (Matroska's
 * unit). The error is below 1e-8 frames per frame, so FFmpeg's fps filter puts frame i exactly
 * at output frame i for any render length.
 */
export function tickNanoseconds(fps: number): number {
  return Math.round(1e9 / fps);
}

/** The bytes that open the stream: header, segment start, info and the one track. */
export function streamHeader(options: {
  codec: FrameCodec;
  fps: number;
  width: number;
  height: number;
}): Buffer {
  const ebml = element(
    ID.EBML,
    uint(ID.EBMLVersion, 1),
    uint(ID.EBMLReadVersion, 1),
    uint(ID.EBMLMaxIDLength, 4),
    uint(ID.EBMLMaxSizeLength, 8),
    text(ID.DocType, "matroska"),
    uint(ID.DocTypeVersion, 4),
    uint(ID.DocTypeReadVersion, 2),
  );
  const info = element(
    ID.Info,
    uint(ID.TimestampScale, tickNanoseconds(options.fps)),
    text(ID.MuxingApp, "svc"),
    text(ID.WritingApp, "svc"),
  );
  const codec =
    options.codec === "jpeg"
      ? [text(ID.CodecID, "V_MJPEG")]
      : [
          text(ID.CodecID, "V_MS/VFW/FOURCC"),
          element(ID.CodecPrivate, pngCodecPrivate(options.width, options.height)),
        ];
  const tracks = element(
    ID.Tracks,
    element(
      ID.TrackEntry,
      uint(ID.TrackNumber, 1),
      uint(ID.TrackUID, 1),
      uint(ID.TrackType, 1),
      uint(ID.FlagLacing, 0),
      ...codec,
      element(ID.Video, uint(ID.PixelWidth, options.width), uint(ID.PixelHeight, options.height)),
    ),
  );
  return Buffer.concat([ebml, Buffer.from(ID.Segment), UNKNOWN_SIZE, info, tracks]);
}

/**
 * One frame as its own cluster: the cluster's timestamp is the frame index and the block's
 * relative timestamp 0, so no index ever overflows the block's 16-bit offset. Returned as the
 * small header and the image, so the image is written as is, never copied.
 */
export function frameCluster(index: number, image: Buffer): [Buffer, Buffer] {
  // Track 1 (vint 0x81), relative timestamp 0, flags: keyframe.
  const blockHeader = Buffer.from([0x81, 0x00, 0x00, 0x80]);
  const timestamp = uint(ID.Timestamp, index);
  const blockSize = blockHeader.length + image.length;
  const clusterSize =
    timestamp.length + ID.SimpleBlock.length + sizeVint(blockSize).length + blockSize;
  const head = Buffer.concat([
    Buffer.from(ID.Cluster),
    sizeVint(clusterSize),
    timestamp,
    Buffer.from(ID.SimpleBlock),
    sizeVint(blockSize),
    blockHeader,
  ]);
  return [head, image];
}
