// Test support: a file's audio decoded to plain samples, and the loudness of a stretch of it, so
// tests can say where sound is and how loud, and compare two renders' audio sample by sample.
import { spawn } from "node:child_process";
import { AUDIO_SAMPLE_RATE } from "../ffmpeg/encode";
import { resolveFfmpeg } from "../ffmpeg/ffmpeg";

/** The first audio stream of `file` as float samples at the mix's rate, its two channels averaged. */
export async function decodeAudio(file: string): Promise<Float32Array> {
  const ffmpeg = await resolveFfmpeg();
  // Two channels, averaged here: FFmpeg's own downmix to one channel adds them at -3 dB each.
  const args = ["-v", "error", "-i", file, "-map", "0:a:0", "-ac", "2"];
  args.push("-ar", String(AUDIO_SAMPLE_RATE), "-f", "f32le", "pipe:1");
  const child = spawn(ffmpeg.path, args, { stdio: ["ignore", "pipe", "pipe"] });
  const chunks: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  if (code !== 0) throw new Error(`decoding the audio of ${file} failed: ${stderr.trim()}`);
  const bytes = Buffer.concat(chunks);
  const samples = new Float32Array(bytes.length / 8);
  for (let i = 0; i < samples.length; i++) {
    samples[i] = (bytes.readFloatLE(i * 8) + bytes.readFloatLE(i * 8 + 4)) / 2;
  }
  return samples;
}

/** Root mean square of the samples in [fromSeconds, toSeconds). */
export function rms(samples: Float32Array, fromSeconds: number, toSeconds: number): number {
  const from = Math.max(0, Math.round(fromSeconds * AUDIO_SAMPLE_RATE));
  const to = Math.min(samples.length, Math.round(toSeconds * AUDIO_SAMPLE_RATE));
  if (to <= from) return 0;
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / (to - from));
}
