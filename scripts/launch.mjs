#!/usr/bin/env node
// `npm start` / `npm run start:web`: build the app if its sources changed, then open the desktop
// window with Electron when the Electron runtime is present (or can be installed), and otherwise
// serve the same app to a browser (web mode) and print its URL.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const forceWeb = process.argv.includes("--web") || process.env.SVC_WEB_MODE === "1";
const log = (line) => process.stderr.write(`svc: ${line}\n`);

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = 0;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

function ensureBuilt() {
  const outputs = ["out/main/electron.js", "out/preload/index.cjs", "out/renderer/index.html"].map(
    (p) => join(root, p),
  );
  // Every folder the bundles take code from: the main process bundles src/core and src/node too.
  const sources = [
    "src/main",
    "src/preload",
    "src/renderer",
    "src/shared",
    "src/core",
    "src/node",
    "src/player",
    "electron.vite.config.ts",
  ];
  const builtAt = Math.min(...outputs.map((p) => (existsSync(p) ? statSync(p).mtimeMs : 0)));
  const changedAt = Math.max(...sources.map((p) => newestMtime(join(root, p))));
  if (builtAt > changedAt) return;
  log("building the app (electron-vite build)…");
  const cli = join(root, "node_modules", "electron-vite", "bin", "electron-vite.js");
  const result = spawnSync(process.execPath, [cli, "build"], {
    cwd: root,
    stdio: ["ignore", 2, 2],
  });
  if (result.status !== 0) {
    log("the build failed; see the messages above.");
    process.exit(1);
  }
}

function hasDisplay() {
  if (process.platform !== "linux") return true;
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

/** Path of the Electron binary if it is installed, without triggering the package's lazy download. */
function installedElectron() {
  const pkgDir = join(root, "node_modules", "electron");
  const pathFile = join(pkgDir, "path.txt");
  if (!existsSync(pathFile)) return undefined;
  const binary = join(pkgDir, "dist", readFileSync(pathFile, "utf8").trim());
  return existsSync(binary) ? binary : undefined;
}

function tryInstallElectron() {
  const installer = join(root, "node_modules", "electron", "install.js");
  if (!existsSync(installer)) return false;
  log("the Electron runtime is not installed yet; downloading it…");
  const timeout = Number(process.env.SVC_ELECTRON_INSTALL_TIMEOUT_MS || 180_000);
  const result = spawnSync(process.execPath, [installer], {
    cwd: root,
    stdio: ["ignore", 2, 2],
    timeout,
  });
  return result.status === 0;
}

function electronBinary() {
  if (forceWeb) return undefined;
  if (!hasDisplay()) {
    log("no display found, so the desktop window cannot open; using web mode.");
    return undefined;
  }
  const present = installedElectron();
  if (present) return present;
  if (process.env.CI && process.env.CI !== "false") {
    log("CI is set, so the Electron runtime is not downloaded; using web mode.");
    return undefined;
  }
  if (tryInstallElectron()) return installedElectron();
  log("the Electron runtime could not be installed (offline?); using web mode.");
  return undefined;
}

function openInBrowser(url) {
  if (process.env.SVC_NO_OPEN === "1" || !hasDisplay()) return;
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  const child = spawn(command, args, { stdio: "ignore", detached: true });
  child.on("error", () => log("could not open a browser; open the URL above yourself."));
  child.unref();
}

ensureBuilt();
const electron = electronBinary();
if (electron) {
  const child = spawn(electron, [root], { stdio: "inherit" });
  child.on("exit", (code) => process.exit(code ?? 1));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  const { runWebMode } = await import("../src/main/web.ts");
  const server = await runWebMode(root);
  process.stdout.write(`svc Desktop (web mode) is running at ${server.url}\n`);
  log("press Ctrl+C to stop.");
  openInBrowser(server.url);
  const stop = () => void server.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
