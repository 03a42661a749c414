// Settings: where renders run (on this computer, or on a service at an address), downloads
// folder, concurrency, where the sign-in is kept, the folder browser's limit (web mode: a limit,
// and why) and the theme (this window only). Words for creators: no URLs of the local service.
import { BrandSettings } from "../components/BrandSettings";
import { ErrorNote } from "../components/ErrorNote";
import { useSettingsForm } from "../hooks/settings-form";
import { useUiStore, type ThemeChoice } from "../store";

export function SettingsScreen() {
  const form = useSettingsForm();
  const theme = useUiStore((state) => state.theme);
  const setTheme = useUiStore((state) => state.setTheme);
  const { draft } = form;
  return (
    <div className="screen narrow">
      <h2 className="screen-title">Settings</h2>
      <section className="panel" aria-labelledby="appearance-title">
        <h3 id="appearance-title">Appearance</h3>
        <label>
          Theme
          <select value={theme} onChange={(event) => setTheme(event.target.value as ThemeChoice)}>
            <option value="system">Same as the system</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </label>
      </section>
      {form.settings.data ? <BrandSettings /> : null}
      {form.settings.isPending ? <p role="status">Loading the settings…</p> : null}
      {form.settings.error ? <ErrorNote error={form.settings.error} /> : null}
      {draft ? (
        <form
          className="panel"
          aria-labelledby="app-settings-title"
          onSubmit={(event) => {
            event.preventDefault();
            form.save();
          }}
        >
          <h3 id="app-settings-title">Rendering</h3>
          <fieldset>
            <legend>Where renders run</legend>
            <label className="inline">
              <input
                type="radio"
                name="service"
                checked={draft.serviceMode === "local"}
                onChange={() => form.edit({ serviceMode: "local" })}
              />
              Render on this computer
            </label>
            <label className="inline">
              <input
                type="radio"
                name="service"
                checked={draft.serviceMode === "url"}
                onChange={() => form.edit({ serviceMode: "url" })}
              />
              Render on a service
            </label>
            {draft.serviceMode === "url" ? (
              <label>
                Service address
                <input
                  type="url"
                  value={draft.serviceUrl}
                  placeholder="https://render.example.com"
                  onChange={(event) => form.edit({ serviceUrl: event.target.value })}
                />
              </label>
            ) : null}
          </fieldset>
          <label>
            Downloads folder
            <input
              type="text"
              value={draft.downloadsDir}
              onChange={(event) => form.edit({ downloadsDir: event.target.value })}
            />
          </label>
          <label>
            Renders at once
            <input
              type="number"
              min={1}
              max={8}
              value={Number.isFinite(draft.concurrency) ? draft.concurrency : ""}
              onChange={(event) => form.edit({ concurrency: event.target.valueAsNumber })}
            />
          </label>
          <label>
            Where the sign-in is kept
            <select
              value={draft.credentialStore}
              onChange={(event) =>
                form.edit({ credentialStore: event.target.value as "file" | "keychain" })
              }
            >
              <option value="file">A file on this computer (shared with the command line)</option>
              <option value="keychain">The system keychain</option>
            </select>
          </label>
          <label>
            Only show folders under (in a browser tab)
            <input
              type="text"
              value={draft.folderBrowserRoot}
              placeholder="your home folder and your own drives"
              aria-describedby="folder-limit-why"
              onChange={(event) => form.edit({ folderBrowserRoot: event.target.value })}
            />
          </label>
          <p id="folder-limit-why" className="hint-line">
            A limit, not a start: when the app runs in a browser tab, Choose folder… shows only
            these folders, so other people’s files and the system’s stay out of view. It reopens
            where you last were.
          </p>
          {form.problem ? (
            <p className="issue" role="alert">
              {form.problem}
            </p>
          ) : null}
          {form.update.error ? <ErrorNote error={form.update.error} title="Not saved." /> : null}
          {form.update.isSuccess && !form.dirty ? <p className="ok">Saved.</p> : null}
          <div className="actions">
            <button
              type="submit"
              className="primary"
              disabled={!form.dirty || Boolean(form.problem) || form.update.isPending}
            >
              Save
            </button>
          </div>
        </form>
      ) : null}
    </div>
  );
}
