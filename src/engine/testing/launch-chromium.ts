// Launches the Chromium a render would use (same binary, same base flags) through
// playwright-core, for tests that drive a page. Renders never load playwright-core: they drive
// the browser over the DevTools pipe themselves (src/engine/browser/cdp.ts), which is why
// playwright-core is a dev dependency only.
import type { Browser } from "playwright-core";
import { BASE_CHROMIUM_ARGS, resolveChromium, sharedMemoryArgs } from "../browser/browser";

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  const resolved = await resolveChromium();
  return chromium.launch({
    executablePath: resolved.executablePath,
    args: [...BASE_CHROMIUM_ARGS, ...sharedMemoryArgs()],
    env: { ...process.env, ...resolved.env },
  });
}
