// The caption files a creator chose row by row in the "Render many…" grid (issue 37): read and
// checked here with the shared parser when chosen, kept by row number until another table is
// loaded, and sent with the batch as each row's cues. A row without one takes the file its
// table's `captions` cell names in the project (checked by the main process), else the project's
// captions from the Captions panel.
import { create } from "zustand";
import { parseCaptions, type CaptionCue } from "../../shared/captions";

export interface ChosenCaptionFile {
  fileName: string;
  /** The cues when the file reads as captions. */
  cues?: CaptionCue[];
  /** What is wrong with it (with its line), when it does not. */
  problem?: string;
}

interface BatchCaptionsState {
  byRow: Record<number, ChosenCaptionFile>;
  choose(row: number, file: ChosenCaptionFile): void;
  forget(row: number): void;
  clear(): void;
}

export const useBatchCaptions = create<BatchCaptionsState>((set) => ({
  byRow: {},
  choose: (row, file) => set((state) => ({ byRow: { ...state.byRow, [row]: file } })),
  forget: (row) =>
    set((state) => {
      const byRow = { ...state.byRow };
      delete byRow[row];
      return { byRow };
    }),
  clear: () => set({ byRow: {} }),
}));

/** Reads a file chosen for `row`: its cues, or the problem naming its line. */
export async function chooseRowCaptionFile(row: number, file: File): Promise<void> {
  const parsed = parseCaptions(await file.text(), file.name);
  useBatchCaptions
    .getState()
    .choose(
      row,
      parsed.ok
        ? { fileName: file.name, cues: parsed.track.cues }
        : { fileName: file.name, problem: parsed.error.message },
    );
}
