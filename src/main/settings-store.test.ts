import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { defaultSettings, SettingsStore } from "./settings-store";
import { tempDir } from "./testing/support";

let dir: string;

beforeEach(async () => {
  dir = await tempDir("svc-desktop-settings-");
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("starts from the defaults, keeping only the valid fields of a hand-edited file", async () => {
  const file = join(dir, "settings.json");
  await writeFile(
    file,
    JSON.stringify({ concurrency: 0, service: "http://svc.example:8080", downloadsDir: 7 }),
  );
  const store = await SettingsStore.open(file, defaultSettings("/home/ada"));
  expect(store.get()).toEqual({
    service: "http://svc.example:8080",
    downloadsDir: "/home/ada/Downloads/svc",
    concurrency: 2,
    credentialStore: "file",
  });
  await writeFile(file, "{ not json");
  expect((await SettingsStore.open(file, defaultSettings("/home/ada"))).get().service).toBe(
    "local",
  );
});

it("saves every change as whole JSON through a temp file, and refuses invalid values", async () => {
  const file = join(dir, "settings.json");
  const store = await SettingsStore.open(file, defaultSettings("/home/ada"));
  await Promise.all([1, 2, 3, 4].map((concurrency) => store.update({ concurrency })));
  expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ concurrency: 4 });
  expect(await readdir(dir)).toEqual(["settings.json"]);
  await expect(store.update({ service: "ftp://svc.example" })).rejects.toThrow();
  expect(store.get().service).toBe("local");
  const reopened = await SettingsStore.open(file, defaultSettings("/elsewhere"));
  expect(reopened.get()).toMatchObject({ concurrency: 4, downloadsDir: "/home/ada/Downloads/svc" });
});
