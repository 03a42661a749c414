// Test support: hostile and friendly zip archives, and a tiny composition to render. buildZip
// writes a zip in memory byte by byte: its knobs for modes and declared sizes exist so tests can
// build hostile archives that a well-behaved zip library refuses to produce (absolute names, "..",
// symlinks, lying sizes). Product code zips with archiver (src/node/zip.ts).
import { crc32, deflateRawSync } from "node:zlib";

export interface ZipEntrySpec {
  name: string;
  data?: Buffer | string;
  /** Unix mode, e.g. 0o120777 for a symlink. Default a regular file 0o100644. */
  mode?: number;
  deflate?: boolean;
  /** Overrides the uncompressed size written in the headers (to lie about it). */
  declaredSize?: number;
}

/** Compressed bytes and CRC of each data buffer, so many entries of one buffer cost one deflate. */
const packed = new WeakMap<Buffer, { deflated: Buffer; crc: number }>();

function pack(raw: Buffer): { deflated: Buffer; crc: number } {
  let found = packed.get(raw);
  if (!found) packed.set(raw, (found = { deflated: deflateRawSync(raw), crc: crc32(raw) >>> 0 }));
  return found;
}

export function buildZip(entries: ZipEntrySpec[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8");
    const raw = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data ?? "", "utf8");
    const body = entry.deflate ? pack(raw).deflated : raw;
    const crc = Buffer.isBuffer(entry.data) ? pack(raw).crc : crc32(raw) >>> 0;
    const size = entry.declaredSize ?? raw.length;
    const method = entry.deflate ? 8 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const centralDir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, centralDir, end]);
}

/** A 1920x1080 composition with a CSS animation, `seconds` long, declaring `variables`. */
export function compositionHtml(options: { seconds?: number; variables?: unknown[] } = {}): string {
  const seconds = options.seconds ?? 1;
  const variables = options.variables
    ? ` data-composition-variables='${JSON.stringify(options.variables).replace(/'/g, "&#39;")}'`
    : "";
  return `<!doctype html>
<html${variables}>
<head><meta charset="utf-8"><style>
  html, body { margin: 0; background: #102030; }
  #box { position: absolute; top: 400px; left: 0; width: 200px; height: 200px; background: #e0a020;
         animation: slide ${seconds}s linear forwards; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(1600px); } }
</style></head>
<body>
  <div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="${seconds}">
    <div id="box"></div>
  </div>
</body>
</html>
`;
}
