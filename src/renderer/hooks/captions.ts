// The captions of the open project (issue 37): read from a dropped or chosen file with the shared
// parser, edited cue by cue, shown live in the preview and sent with the render as the API's
// `captions.cues`. Kept in a store of its own, cleared when another project opens.
import { create } from "zustand";
import {
  DEFAULT_CAPTION_STYLE,
  parseCaptions,
  type CaptionCue,
  type CaptionStyle,
  type CaptionsProblem,
  type PageCaptions,
} from "../../shared/captions";

/** File names the captions panel and the project drop take as caption files. */
export const CAPTION_FILE = /\.(srt|vtt|json)$/i;

interface CaptionsState {
  /** The project these captions belong to. */
  projectDir: string | undefined;
  fileName: string | undefined;
  cues: CaptionCue[];
  style: CaptionStyle;
  problem: { fileName: string; error: CaptionsProblem } | undefined;
  load(projectDir: string, fileName: string, text: string): void;
  setStyle(style: CaptionStyle): void;
  editCue(index: number, change: Partial<Pick<CaptionCue, "start" | "end" | "text">>): void;
  clear(): void;
}

export const useCaptionsStore = create<CaptionsState>((set) => ({
  projectDir: undefined,
  fileName: undefined,
  cues: [],
  style: DEFAULT_CAPTION_STYLE,
  problem: undefined,
  load(projectDir, fileName, text) {
    const parsed = parseCaptions(text, fileName);
    if (!parsed.ok) {
      set({ problem: { fileName, error: parsed.error } });
      return;
    }
    set({ projectDir, fileName, cues: parsed.track.cues, problem: undefined });
  },
  setStyle: (style) => set({ style }),
  editCue(index, change) {
    set((state) => ({
      cues: state.cues.map((cue, at) => {
        if (at !== index) return cue;
        const next = { ...cue, ...change };
        // Word timings no longer match words the creator retyped: karaoke shares the time out.
        if (change.text !== undefined && change.text !== cue.text) delete next.words;
        return next;
      }),
    }));
  },
  clear: () => set({ fileName: undefined, cues: [], problem: undefined, projectDir: undefined }),
}));

/** Reads a caption file the creator dropped or chose. */
export async function loadCaptionFile(projectDir: string, file: File): Promise<void> {
  const text = await file.text();
  useCaptionsStore.getState().load(projectDir, file.name, text);
}

/** What is wrong with a cue as edited, in the creator's words, or undefined. */
export function cueProblem(cue: CaptionCue): string | undefined {
  if (!Number.isFinite(cue.start) || cue.start < 0) return "The start must be 0 seconds or later.";
  if (!Number.isFinite(cue.end) || cue.end <= cue.start) return "It must end after it starts.";
  if (cue.text.trim() === "") return "Write the words, or the caption shows nothing.";
  return undefined;
}

/** The captions of `projectDir` for the preview and the render, or undefined for none. */
export function useProjectCaptions(projectDir: string | undefined): PageCaptions | undefined {
  const state = useCaptionsStore();
  if (!projectDir || state.projectDir !== projectDir || state.cues.length === 0) return undefined;
  return { cues: state.cues.filter((cue) => !cueProblem(cue)), style: state.style };
}
