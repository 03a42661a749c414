// The Settings form's draft: starts from the saved settings, saved as a whole on "Save".
import { useState } from "react";
import type { DesktopSettings } from "../../shared/ipc";
import { serviceSettingSchema, settingsSchema } from "../../shared/ipc";
import { useSettings, useUpdateSettings } from "./account";

export interface SettingsDraft {
  serviceMode: "local" | "url";
  serviceUrl: string;
  downloadsDir: string;
  concurrency: number;
  credentialStore: DesktopSettings["credentialStore"];
  folderBrowserRoot: string;
}

function draftOf(settings: DesktopSettings): SettingsDraft {
  return {
    serviceMode: settings.service === "local" ? "local" : "url",
    serviceUrl: settings.service === "local" ? "" : settings.service,
    downloadsDir: settings.downloadsDir,
    concurrency: settings.concurrency,
    credentialStore: settings.credentialStore,
    folderBrowserRoot: settings.folderBrowserRoot ?? "",
  };
}

export function useSettingsForm() {
  const settings = useSettings();
  const update = useUpdateSettings();
  const [edits, setEdits] = useState<Partial<SettingsDraft>>({});
  const draft = settings.data ? { ...draftOf(settings.data), ...edits } : undefined;
  const candidate = draft
    ? {
        service: draft.serviceMode === "local" ? "local" : draft.serviceUrl.trim(),
        downloadsDir: draft.downloadsDir,
        concurrency: draft.concurrency,
        credentialStore: draft.credentialStore,
        ...(draft.folderBrowserRoot.trim()
          ? { folderBrowserRoot: draft.folderBrowserRoot.trim() }
          : {}),
      }
    : undefined;
  const parsed = candidate ? settingsSchema.safeParse(candidate) : undefined;
  const serviceProblem =
    draft &&
    draft.serviceMode === "url" &&
    !serviceSettingSchema.safeParse(draft.serviceUrl.trim()).success
      ? 'Enter the service\'s http(s) URL, e.g. "https://render.example.com".'
      : undefined;
  const problem =
    serviceProblem ?? (parsed && !parsed.success ? parsed.error.issues[0]?.message : undefined);
  return {
    settings,
    draft,
    problem,
    dirty: Object.keys(edits).length > 0,
    edit: (change: Partial<SettingsDraft>) => setEdits((current) => ({ ...current, ...change })),
    save: () => {
      if (parsed?.success) update.mutate(parsed.data, { onSuccess: () => setEdits({}) });
    },
    update,
  };
}
