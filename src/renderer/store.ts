// The renderer's UI state (zustand): which screen is shown, the theme, the open project and what
// the creator has typed into its forms. Server state (scans, queued renders, renders, settings)
// lives in react-query (hooks/); nothing here is fetched. Theme, recent projects, where the folder
// browser was, and each project's choices (composition, variable values, render options, strict)
// survive a reload (localStorage): a project reopens as it was left, a new one starts from the
// defaults, and nothing carries over from one project to another. Recent lists only projects that
// opened (the Project screen calls `rememberRecent` once a scan succeeded). The "Render many…"
// table being edited is kept here too (not persisted): it is what the creator typed or imported,
// checked on every change by hooks/batch-table.ts.
import { create } from "zustand";
import { persist } from "zustand/middleware";
import { DEFAULT_RENDER_SETTINGS } from "../shared/render-options";
import type { AspectRatio, RenderSettingFields } from "../shared/render-options";
import type { BatchTable } from "../shared/batch";
import type { VariableValues } from "../shared/variables";

export const SCREENS = ["project", "queue", "history", "account", "settings"] as const;
export type Screen = (typeof SCREENS)[number];
export type ThemeChoice = "system" | "light" | "dark";

/**
 * The shared render settings (an undefined aspect ratio is the one detected from the composition),
 * and the files made besides the main video (render-plan.ts turns them into the API's `outputs`).
 */
export type RenderChoices = Required<Omit<RenderSettingFields, "aspectRatio">> & {
  aspectRatio: AspectRatio | undefined;
  /** The sizes ticked; empty: the one the composition is made at (or `aspectRatio`). */
  sizes: AspectRatio[];
  /** A GIF of the video too (at the main size). */
  gif: boolean;
  /** A poster picture (PNG) too, at `posterTime` seconds (undefined: the middle of the video). */
  poster: boolean;
  posterTime: number | undefined;
};

export const DEFAULT_RENDER_CHOICES: RenderChoices = {
  ...DEFAULT_RENDER_SETTINGS,
  aspectRatio: undefined,
  sizes: [],
  gif: false,
  poster: false,
  posterTime: undefined,
};

const RECENT_LIMIT = 6;
/** Projects whose choices are remembered (the least recently opened are forgotten first). */
const REMEMBERED_PROJECTS = 40;

/** What a project reopens with. */
export interface ProjectChoices {
  composition: string | undefined;
  values: VariableValues;
  strictVariables: boolean;
  render: RenderChoices;
}

const DEFAULT_CHOICES: ProjectChoices = {
  composition: undefined,
  values: {},
  strictVariables: true,
  render: DEFAULT_RENDER_CHOICES,
};

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
  /** Each project's choices, by folder, most recently opened first. */
  projects: Record<string, ProjectChoices>;
  /** The folder the web-mode folder browser showed last (it reopens there). */
  folderBrowserPath: string | undefined;
  /** Values the creator changed (a missing key means the schema's default). */
  values: VariableValues;
  strictVariables: boolean;
  render: RenderChoices;
  folderBrowserOpen: boolean;
  /** The "New video" gallery of starter templates is shown (not persisted). */
  galleryOpen: boolean;
  batch: BatchDraft;
  show(screen: Screen): void;
  setTheme(theme: ThemeChoice): void;
  openProject(dir: string): void;
  /** Adds the open project to Recent (once it opened: a folder that fails is not added). */
  rememberRecent(dir: string): void;
  setComposition(composition: string): void;
  setValue(id: string, value: unknown): void;
  replaceValues(values: VariableValues): void;
  resetValues(): void;
  /** The render options and Strict back to the defaults (for this project). */
  resetRenderOptions(): void;
  setStrictVariables(strict: boolean): void;
  setRender(change: Partial<RenderChoices>): void;
  setFolderBrowserOpen(open: boolean): void;
  setGalleryOpen(open: boolean): void;
  setFolderBrowserPath(path: string | undefined): void;
  setBatchOpen(open: boolean): void;
  loadBatchTable(source: string, table: BatchTable): void;
  setBatchCell(row: number, column: string, value: string): void;
  setBatchRowDropped(row: number, dropped: boolean): void;
  setBatchPattern(pattern: string): void;
}

/** The open project's choices changed: the state, with them kept under its folder too. */
function withChoices(state: UiState, change: Partial<ProjectChoices>): Partial<UiState> {
  const next: ProjectChoices = {
    composition: state.composition,
    values: state.values,
    strictVariables: state.strictVariables,
    render: state.render,
    ...change,
  };
  if (!state.projectDir) return change;
  return { ...change, projects: { ...state.projects, [state.projectDir]: next } };
}

export const useUiStore = create<UiState>()(
  persist(
    (set) => ({
      screen: "project",
      theme: "system",
      projectDir: undefined,
      recentProjects: [],
      projects: {},
      folderBrowserPath: undefined,
      ...DEFAULT_CHOICES,
      folderBrowserOpen: false,
      galleryOpen: false,
      batch: NO_BATCH,
      show: (screen) => set({ screen }),
      setTheme: (theme) => set({ theme }),
      openProject: (dir) =>
        set((state) => {
          const remembered = state.projects[dir] ?? DEFAULT_CHOICES;
          const { [dir]: _moved, ...others } = state.projects;
          const kept = Object.entries(others).slice(0, REMEMBERED_PROJECTS - 1);
          return {
            projectDir: dir,
            ...remembered,
            render: { ...DEFAULT_RENDER_CHOICES, ...remembered.render },
            projects: Object.fromEntries([[dir, remembered], ...kept]),
            folderBrowserOpen: false,
            galleryOpen: false,
            batch: NO_BATCH,
          };
        }),
      rememberRecent: (dir) =>
        set((state) =>
          state.recentProjects[0] === dir
            ? {}
            : {
                recentProjects: [dir, ...state.recentProjects.filter((d) => d !== dir)].slice(
                  0,
                  RECENT_LIMIT,
                ),
              },
        ),
      setComposition: (composition) =>
        set((state) => ({ ...withChoices(state, { composition, values: {} }), batch: NO_BATCH })),
      setValue: (id, value) =>
        set((state) => withChoices(state, { values: { ...state.values, [id]: value } })),
      replaceValues: (values) => set((state) => withChoices(state, { values })),
      resetValues: () => set((state) => withChoices(state, { values: {} })),
      resetRenderOptions: () =>
        set((state) =>
          withChoices(state, { render: DEFAULT_RENDER_CHOICES, strictVariables: true }),
        ),
      setStrictVariables: (strictVariables) =>
        set((state) => withChoices(state, { strictVariables })),
      setRender: (change) =>
        set((state) => withChoices(state, { render: { ...state.render, ...change } })),
      setFolderBrowserOpen: (folderBrowserOpen) => set({ folderBrowserOpen }),
      setGalleryOpen: (galleryOpen) => set({ galleryOpen }),
      setFolderBrowserPath: (folderBrowserPath) => set({ folderBrowserPath }),
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
      // Version 1 kept one set of render options for every project; they are left behind.
      version: 1,
      migrate: (persisted) => {
        const old = (persisted ?? {}) as Partial<UiState>;
        return { theme: old.theme ?? "system", recentProjects: old.recentProjects ?? [] };
      },
      partialize: (state) => ({
        theme: state.theme,
        recentProjects: state.recentProjects,
        projects: state.projects,
        folderBrowserPath: state.folderBrowserPath,
      }),
    },
  ),
);
