// The app's settings (SPEC.md section 7: service local or URL, downloads folder, concurrency,
// credential store) in `<app data dir>/settings.json`. Values on disk are checked with the shared
// zod schema; anything missing or invalid falls back to its default, so a hand-edited file can
// never stop the app from starting.
import { homedir } from "node:os";
import { join } from "node:path";
import { settingsSchema, type DesktopSettings } from "../shared/ipc";
import { JsonFileWriter, readJsonFile } from "../node/index";

export const DEFAULT_CONCURRENCY = 2;

export function defaultSettings(home = homedir()): DesktopSettings {
  return {
    service: "local",
    downloadsDir: join(home, "Downloads", "svc"),
    concurrency: DEFAULT_CONCURRENCY,
    credentialStore: "file",
  };
}

export class SettingsStore {
  private readonly listeners = new Set<
    (settings: DesktopSettings, previous: DesktopSettings) => void
  >();

  private constructor(
    private readonly writer: JsonFileWriter,
    private current: DesktopSettings,
  ) {}

  static async open(file: string, defaults: DesktopSettings): Promise<SettingsStore> {
    const stored = await readJsonFile(file);
    const merged: Record<string, unknown> = { ...defaults };
    if (stored && typeof stored === "object") {
      for (const [key, value] of Object.entries(stored)) {
        const field = settingsSchema.shape[key as keyof DesktopSettings];
        if (field && field.safeParse(value).success) merged[key] = value;
      }
    }
    return new SettingsStore(new JsonFileWriter(file), settingsSchema.parse(merged));
  }

  get(): DesktopSettings {
    return { ...this.current };
  }

  async update(change: Partial<DesktopSettings>): Promise<DesktopSettings> {
    const previous = this.current;
    const next = settingsSchema.parse({ ...previous, ...stripUndefined(change) });
    this.current = next;
    await this.writer.write(next);
    for (const listener of this.listeners) listener(this.get(), previous);
    return this.get();
  }

  onChange(listener: (settings: DesktopSettings, previous: DesktopSettings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
