// How the UI reaches the main process: the preload bridge inside Electron, HTTP in web mode
// (the token comes from the URL fragment that `npm start` printed).

export interface AppInfo {
  app: string;
  version: string;
}

interface DesktopBridge {
  hello(): Promise<AppInfo>;
}

declare global {
  interface Window {
    svcDesktop?: DesktopBridge;
  }
}

function webToken(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get("token") ?? "";
}

export async function hello(): Promise<AppInfo> {
  if (window.svcDesktop) return window.svcDesktop.hello();
  const response = await fetch("/api/hello", {
    headers: { authorization: `Bearer ${webToken()}` },
  });
  if (!response.ok) throw new Error(`the app service answered HTTP ${response.status}`);
  const body = (await response.json()) as { data: AppInfo };
  return body.data;
}
