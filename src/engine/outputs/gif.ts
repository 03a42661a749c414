// GIF output. A GIF holds at most 256 colours, so the palette is made for this render from all of
// its frames (palettegen), then every frame is mapped onto it (paletteuse). Defaults that keep the
// file small: ordered (Bayer) dithering, whose regular pattern compresses far better than error
// diffusion's noise, and only the rectangle that changed stored for each frame; the GIF loops
// forever. Frame delays are whole hundredths of a second, so 30 fps alternates 3 and 4 (the total
// stays exact), and GIF_MAX_FPS caps the rate (shared/render-options.ts).
import type { Quality } from "../../shared/render-options";
import { runFfmpeg } from "../ffmpeg/encode";

/** Palette size and dithering per quality tier; high spends bytes on smooth gradients. */
const GIF_PALETTE: Record<Quality, { colors: number; dither: string }> = {
  draft: { colors: 128, dither: "bayer:bayer_scale=5" },
  standard: { colors: 256, dither: "bayer:bayer_scale=5" },
  high: { colors: 256, dither: "sierra2_4a" },
};

/** FFmpeg's filter graph for a render's GIF (exported for the tests). */
export function gifFilter(quality: Quality): string {
  const { colors, dither } = GIF_PALETTE[quality];
  return (
    `split[frames][forPalette];[forPalette]palettegen=max_colors=${colors}:stats_mode=full[palette];` +
    `[frames][palette]paletteuse=dither=${dither}:diff_mode=rectangle`
  );
}

export async function writeGif(options: {
  ffmpegPath: string;
  /** The render's frames as one video. */
  input: string;
  output: string;
  quality?: Quality;
  signal?: AbortSignal;
}): Promise<void> {
  await runFfmpeg(
    options.ffmpegPath,
    [
      ...["-hide_banner", "-loglevel", "error", "-y", "-i", options.input],
      ...["-filter_complex", gifFilter(options.quality ?? "standard"), "-loop", "0"],
      ...["-f", "gif", options.output],
    ],
    options.signal,
  );
}
