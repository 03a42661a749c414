// The app-level IPC methods: `app.*` (name, version, examples), the starter templates
// (`gallery.*`), `settings.*`, `service.state` and the host's pickers and openers (`host.*`).
import { join } from "node:path";
import { listExamples } from "./examples";
import { folderPlaces, listProjectFolders } from "./folder-browser";
import type { Gallery } from "./gallery";
import type { DesktopHost } from "./host";
import type { IpcHandlers } from "./ipc-router";
import type { RenderQueue } from "./render-queue";
import type { ServiceConnection } from "./service-connection";
import type { SettingsStore } from "./settings-store";

type AppHandlers = Pick<
  IpcHandlers,
  | "app.info"
  | "app.examples"
  | "gallery.list"
  | "gallery.poster"
  | "gallery.create"
  | "settings.get"
  | "settings.set"
  | "service.state"
  | "host.pickFolder"
  | "host.listFolders"
  | "host.revealFile"
  | "host.openExternal"
>;

export function appHandlers(options: {
  app: string;
  version: string;
  appRoot: string;
  examplesDir: string | undefined;
  home: string;
  gallery: Gallery;
  settings: SettingsStore;
  connection: ServiceConnection;
  queue: RenderQueue;
  host: DesktopHost;
  /** Cancels a sign-in in progress (auth-handlers.ts). */
  cancelSignIn: () => Promise<unknown>;
}): AppHandlers {
  const { gallery, settings, connection, queue, host } = options;
  return {
    "app.info": async () => ({ app: options.app, version: options.version }),
    "app.examples": () => listExamples(options.examplesDir ?? join(options.appRoot, "examples")),
    "gallery.list": () => gallery.list(),
    "gallery.poster": ({ name }) => gallery.poster(name),
    "gallery.create": ({ name, folderName }) => gallery.create(name, folderName),
    "settings.get": async () => settings.get(),
    "settings.set": async (change) => {
      const before = settings.get();
      const after = await settings.update(change);
      // A sign-in started against the old service or store would finish against the wrong one.
      if (before.service !== after.service || before.credentialStore !== after.credentialStore)
        await options.cancelSignIn();
      return after;
    },
    "service.state": async () => connection.state(),
    "host.pickFolder": () => host.pickFolder(),
    "host.listFolders": async (input) =>
      listProjectFolders(await folderPlaces(options.home, settings.get().folderBrowserRoot), input),
    // By queued render, not by path: the renderer can only show files the app itself wrote.
    "host.revealFile": async ({ queuedRenderId, output }) => ({
      shown: await host.revealFile(await queue.outputFile(queuedRenderId, output)),
    }),
    "host.openExternal": async ({ url }) => ({ opened: await host.openExternal(url) }),
  };
}
