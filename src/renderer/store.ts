// The renderer's UI state (zustand): which screen is shown, the theme, the open project and what
// the creator has typed into its forms. Server state (scans, jobs, renders, settings) lives in
// react-query (hooks/); nothing here is fetched. Theme, recent projects and render options survive
// a reload (localStorage); the project's variable values are per composition and start from the
// schema's defaults. The "Render many…" table being edited is kept here too (not persisted): it is
// what the creator typed or imported, checked on every change by hooks/batch-table.ts.
import { create } from "zustand";
import { persist } from "zustand/middleware";
import { DEFAULT_RENDER_SETTINGS } from "../shared/render-options";
import type { AspectRatio, RenderSettingFields } from "../shared/render-options";
import type { BatchTable } from "../shared/batch";
import type { VariableValues } from "../shared/variables";

export const SCREENS = ["project", "queue", "history", "account", "settings"] as const;
export type Screen = (typeof SCREENS)[number];
export type ThemeChoice = "system" | "light" | "dark";

/** The shared render settings; an undefined aspect ratio is the one detected from the composition. */
export type RenderChoices = Required<Omit<RenderSettingFields, "aspectRatio">> & {
  aspectRatio: AspectRatio | undefined;
};

export const DEFAULT_RENDER_CHOICES: RenderChoices = {
  ...DEFAULT_RENDER_SETTINGS,
  aspectRatio: undefined,
};

const RECENT_LIMIT = 6;

/** "Render many…": the imported table, rows the creator dropped and the file name pattern. */
export interface BatchDraft {
  open: boolean;
  /** Where the table came from (a file name, or "pasted table"). */
  source: string | undefined;
  table: BatchTable | undefined;
  dropped: number[];
  /** Undefined: the suggested pattern for the table. */
  pattern: string | undefined;
}

const NO_BATCH: BatchDraft = {
  open: false,
  source: undefined,
  table: undefined,
  dropped: [],
  pattern: undefined,
};

interface UiState {
  screen: Screen;
  theme: ThemeChoice;
  projectDir: string | undefined;
  composition: string | undefined;
  recentProjects: string[];
  /** Values the creator changed (a missing key means the schema's default). */
  values: VariableValues;
  strictVariables: boolean;
  render: RenderChoices;
  folderBrowserOpen: boolean;
  batch: BatchDraft;
  show(screen: Screen): void;
  setTheme(theme: ThemeChoice): void;
  openProject(dir: string): void;
  setComposition(composition: string): void;
  setValue(id: string, value: unknown): void;
  replaceValues(values: VariableValues): void;
  resetValues(): void;
  setStrictVariables(strict: boolean): void;
  setRender(change: Partial<RenderChoices>): void;
  setFolderBrowserOpen(open: boolean): void;
  setBatchOpen(open: boolean): void;
  loadBatchTable(source: string, table: BatchTable): void;
  setBatchCell(row: number, column: string, value: string): void;
  setBatchRowDropped(row: number, dropped: boolean): void;
  setBatchPattern(pattern: string): void;
}

export const useUiStore = create<UiState>()(
  persist(
    (set) => ({
      screen: "project",
      theme: "system",
      projectDir: undefined,
      composition: undefined,
      recentProjects: [],
      values: {},
      strictVariables: true,
      render: DEFAULT_RENDER_CHOICES,
      folderBrowserOpen: false,
      batch: NO_BATCH,
      show: (screen) => set({ screen }),
      setTheme: (theme) => set({ theme }),
      openProject: (dir) =>
        set((state) => ({
          projectDir: dir,
          composition: undefined,
          values: {},
          folderBrowserOpen: false,
          batch: NO_BATCH,
          recentProjects: [dir, ...state.recentProjects.filter((d) => d !== dir)].slice(
            0,
            RECENT_LIMIT,
          ),
        })),
      setComposition: (composition) => set({ composition, values: {}, batch: NO_BATCH }),
      setValue: (id, value) => set((state) => ({ values: { ...state.values, [id]: value } })),
      replaceValues: (values) => set({ values }),
      resetValues: () => set({ values: {} }),
      setStrictVariables: (strictVariables) => set({ strictVariables }),
      setRender: (change) => set((state) => ({ render: { ...state.render, ...change } })),
      setFolderBrowserOpen: (folderBrowserOpen) => set({ folderBrowserOpen }),
      setBatchOpen: (open) => set((state) => ({ batch: { ...state.batch, open } })),
      loadBatchTable: (source, table) =>
        set((state) => ({ batch: { ...state.batch, source, table, dropped: [] } })),
      setBatchCell: (row, column, value) =>
        set((state) => {
          const table = state.batch.table;
          if (!table) return {};
          const rows = table.rows.map((entry) => {
            if (entry.row !== row) return entry;
            const cells = { ...entry.cells };
            if (value.trim() === "") delete cells[column];
            else cells[column] = value;
            return { row, cells };
          });
          return { batch: { ...state.batch, table: { ...table, rows } } };
        }),
      setBatchRowDropped: (row, dropped) =>
        set((state) => ({
          batch: {
            ...state.batch,
            dropped: dropped
              ? [...state.batch.dropped.filter((r) => r !== row), row]
              : state.batch.dropped.filter((r) => r !== row),
          },
        })),
      setBatchPattern: (pattern) => set((state) => ({ batch: { ...state.batch, pattern } })),
    }),
    {
      name: "svc-desktop-ui",
      partialize: (state) => ({
        theme: state.theme,
        recentProjects: state.recentProjects,
        render: state.render,
        strictVariables: state.strictVariables,
      }),
    },
  ),
);
