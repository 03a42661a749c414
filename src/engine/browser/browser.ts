// Finds and launches the Chromium that renders compositions and runs the e2e tests.
// Order (SPEC.md section 3): SVC_CHROMIUM_PATH, then a system Chrome/Chromium, then the browser
// shipped inside the @sparticuz/chromium npm package (Linux x64), so `npm install` alone gives a
// working engine. The bundled browser is unpacked once into a cache folder with temp-file + rename,
// because several test workers or render workers may ask for it at the same moment.
import { createReadStream, createWriteStream, existsSync, readFileSync, statfsSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress } from "node:zlib";
import { EngineError } from "../errors";

export type BrowserSource = "env" | "system" | "bundled";

export interface ResolvedBrowser {
  executablePath: string;
  source: BrowserSource;
  /** headless-shell builds support HeadlessExperimental.beginFrame (fast, exact capture). */
  headlessShell: boolean;
  /** Extra environment for the browser process (fonts for the bundled build). */
  env: Record<string, string>;
  /** Why this browser, in a sentence `svc doctor` shows. */
  reason: string;
}

/** Flags every launch needs on machines like ours (closed network, no GPU, running as root). */
export const BASE_CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  "--hide-scrollbars",
  "--mute-audio",
  "--font-render-hinting=none",
];

/** Room /dev/shm must have for Chromium's shared memory to go there. */
const MIN_DEV_SHM_BYTES = 1024 ** 3;

/**
 * Chromium keeps shared memory in /dev/shm. Containers often give /dev/shm only 64 MB, which
 * makes Chromium crash, so --disable-dev-shm-usage is a common default; but it moves that memory
 * into files under /tmp, which is a disk on many machines. Use /dev/shm when it has room.
 */
export function sharedMemoryArgs(): string[] {
  try {
    const shm = statfsSync("/dev/shm");
    if (shm.bavail * shm.bsize >= MIN_DEV_SHM_BYTES) return [];
  } catch {
    // no /dev/shm (not Linux, or not mounted)
  }
  return process.platform === "linux" ? ["--disable-dev-shm-usage"] : [];
}

const SYSTEM_CANDIDATES: Record<string, string[]> = {
  linux: [
    // The binary itself before Debian's /usr/bin wrapper, a shell script that would stay in
    // between as one more process per browser.
    "/usr/lib/chromium/chromium-headless-shell",
    "/usr/bin/chromium-headless-shell",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome-stable",
    "/usr/bin/google-chrome",
  ],
  darwin: [
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
  ],
  win32: [
    "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
    "C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe",
  ],
};

/**
 * An installed headless shell is taken before the bundled one: same capture path, and measured
 * no slower per frame (bench/README.md), and it follows the system's security updates.
 */
const SYSTEM_SHELL_REASON =
  "a Chromium headless shell installed on this computer: beginFrame capture, measured as fast as the bundled one, and kept up to date by the system";

function isHeadlessShell(path: string, source: BrowserSource): boolean {
  return source === "bundled" || /headless[-_]shell/i.test(path);
}

let bundledPromise: Promise<ResolvedBrowser> | undefined;

export async function resolveChromium(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResolvedBrowser> {
  const fromEnv = env.SVC_CHROMIUM_PATH?.trim();
  if (fromEnv) {
    if (!existsSync(fromEnv)) {
      throw new EngineError(
        "browser_not_found",
        `SVC_CHROMIUM_PATH points to ${fromEnv}, which does not exist.`,
        "Fix the path in SVC_CHROMIUM_PATH, or unset it to use the browser that ships with svc.",
      );
    }
    return {
      executablePath: fromEnv,
      source: "env",
      headlessShell: isHeadlessShell(fromEnv, "env"),
      env: {},
      reason: "SVC_CHROMIUM_PATH is set",
    };
  }
  for (const candidate of SYSTEM_CANDIDATES[process.platform] ?? []) {
    if (existsSync(candidate)) {
      const headlessShell = isHeadlessShell(candidate, "system");
      return {
        executablePath: candidate,
        source: "system",
        headlessShell,
        env: {},
        reason: headlessShell
          ? SYSTEM_SHELL_REASON
          : "a Chrome/Chromium installed on this computer (screenshot capture; chromium-headless-shell would be faster)",
      };
    }
  }
  bundledPromise ??= unpackBundledChromium().catch((error: unknown) => {
    bundledPromise = undefined;
    throw error;
  });
  return bundledPromise;
}

/** svc's folder in the user's cache (XDG_CACHE_HOME, else ~/.cache). */
export function cacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "svc");
}

async function unpackBundledChromium(): Promise<ResolvedBrowser> {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new EngineError(
      "browser_not_found",
      "No Chrome or Chromium was found on this computer.",
      "Install Google Chrome or Chromium, or set SVC_CHROMIUM_PATH to a Chromium executable.",
    );
  }
  const require = createRequire(import.meta.url);
  let binDir: string;
  let version: string;
  try {
    // The package's exports map hides package.json, so walk up from its entry point.
    let pkgDir = dirname(require.resolve("@sparticuz/chromium"));
    while (!existsSync(join(pkgDir, "bin", "chromium.br")) && dirname(pkgDir) !== pkgDir) {
      pkgDir = dirname(pkgDir);
    }
    binDir = join(pkgDir, "bin");
    version = (
      JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string }
    ).version;
  } catch {
    throw new EngineError(
      "browser_not_found",
      "No Chrome or Chromium was found, and the bundled browser package is missing.",
      "Run `npm install` again, install Chromium (apt-get install chromium), or set SVC_CHROMIUM_PATH.",
    );
  }
  let root = join(cacheRoot(), `chromium-${version}`);
  try {
    await mkdir(root, { recursive: true });
  } catch {
    root = join(tmpdir(), `svc-chromium-${version}`);
    await mkdir(root, { recursive: true });
  }
  const executablePath = join(root, "chromium");
  if (!existsSync(executablePath)) {
    await unpackFile(join(binDir, "chromium.br"), executablePath);
  }
  // SwiftShader libraries sit next to the binary (software WebGL); fonts are a fallback for
  // machines without any system font.
  await unpackTar(join(binDir, "swiftshader.tar.br"), root, "libvk_swiftshader.so");
  const fontsDir = join(root, "fonts");
  await unpackTar(join(binDir, "fonts.tar.br"), fontsDir, "fonts.conf");
  const env: Record<string, string> = {};
  if (!(await hasSystemFonts())) {
    env.FONTCONFIG_PATH = fontsDir;
  }
  return {
    executablePath,
    source: "bundled",
    headlessShell: true,
    env,
    reason:
      "no Chromium is installed on this computer; the headless shell that ships with svc (beginFrame capture)",
  };
}

async function unpackFile(source: string, target: string): Promise<void> {
  const temp = `${target}.${process.pid}.${Date.now()}.tmp`;
  try {
    await pipeline(
      createReadStream(source),
      createBrotliDecompress(),
      createWriteStream(temp, { mode: 0o755 }),
    );
    await rename(temp, target);
  } finally {
    await rm(temp, { force: true });
  }
}

async function unpackTar(source: string, targetDir: string, marker: string): Promise<void> {
  if (existsSync(join(targetDir, marker)) || !existsSync(source)) return;
  const { extract } = await import("tar-fs");
  const temp = `${targetDir}.${process.pid}.${Date.now()}.tmp`;
  try {
    await pipeline(createReadStream(source), createBrotliDecompress(), extract(temp));
    await mkdir(targetDir, { recursive: true });
    for (const name of await readdir(temp)) {
      if (!existsSync(join(targetDir, name))) {
        await rename(join(temp, name), join(targetDir, name)).catch(() => undefined);
      }
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

async function hasSystemFonts(): Promise<boolean> {
  for (const dir of ["/usr/share/fonts", "/usr/local/share/fonts", join(homedir(), ".fonts")]) {
    try {
      if ((await stat(dir)).isDirectory()) return true;
    } catch {
      // not there; try the next one
    }
  }
  return false;
}
