// How the UI reaches the main process: the preload bridge inside Electron, or in web mode HTTP
// (`POST /api/ipc/<method>`) plus a WebSocket for events, with the token from the URL fragment
// that `npm start` printed. Both give a `DesktopBridge` (answers as `IpcResult` envelopes), and
// `apiFromBridge` turns that into the `DesktopApi` the screens use, where a failure is an
// `IpcCallError` carrying the main process's code and hint.
import {
  EVENTS_PROTOCOL,
  IPC_METHOD_NAMES,
  IpcCallError,
  TOKEN_PROTOCOL_PREFIX,
  type AppInfo,
  type DesktopApi,
  type DesktopBridge,
  type IpcEventMessage,
  type IpcResult,
} from "../shared/ipc";

export type { AppInfo };

declare global {
  interface Window {
    svcDesktop?: DesktopBridge;
  }
}

/** The part of the WebSocket API used here (the browser's, or `ws` in Node tests). */
export interface EventSocket {
  readonly readyState: number;
  addEventListener(type: "open" | "close" | "error", listener: () => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  close(): void;
}

export interface WebTransportOptions {
  /** Origin of the web-mode server, e.g. http://127.0.0.1:5173. */
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
  openSocket?: (url: string, protocols: string[]) => EventSocket;
  /** Delay before the event socket reconnects after it closed (default 1 s). */
  reconnectDelayMs?: number;
}

export interface WebBridge extends DesktopBridge {
  /** Resolves once the event socket is open (events sent before that are not seen). */
  whenConnected(): Promise<void>;
  close(): void;
}

export function createWebBridge(options: WebTransportOptions): WebBridge {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const openSocket =
    options.openSocket ??
    ((url: string, protocols: string[]) => new WebSocket(url, protocols) as EventSocket);
  const listeners = new Set<(message: IpcEventMessage) => void>();
  let socket: EventSocket | undefined;
  let connected: Promise<void> | undefined;
  let closed = false;

  async function call(method: string, input: unknown): Promise<IpcResult<unknown>> {
    let response: Response;
    try {
      response = await doFetch(`${options.baseUrl}/api/ipc/${encodeURIComponent(method)}`, {
        method: "POST",
        headers: { authorization: `Bearer ${options.token}`, "content-type": "application/json" },
        body: JSON.stringify(input ?? {}),
      });
    } catch (error) {
      return {
        ok: false,
        error: {
          code: "app_unreachable",
          message: `The app's service does not answer (${(error as Error).message}).`,
          hint: "Check that `npm start` is still running, then reload the page.",
        },
      };
    }
    const body = (await response.json().catch(() => undefined)) as
      IpcResult<unknown> | { error?: { code: string; message: string } } | undefined;
    if (response.ok && body && "ok" in body) return body;
    const error = body && "error" in body && body.error ? body.error : undefined;
    return {
      ok: false,
      error: error ?? {
        code: "app_unreachable",
        message: `The app's service answered HTTP ${response.status}.`,
      },
    };
  }

  function connect(): Promise<void> {
    if (connected) return connected;
    const url = `${options.baseUrl.replace(/^http/, "ws")}/api/events`;
    const current = openSocket(url, [EVENTS_PROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${options.token}`]);
    socket = current;
    connected = new Promise<void>((resolve, reject) => {
      current.addEventListener("open", () => resolve());
      current.addEventListener("error", () =>
        reject(new Error("the event socket could not connect")),
      );
    });
    connected.catch(() => undefined);
    current.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as IpcEventMessage;
      for (const listener of listeners) listener(message);
    });
    current.addEventListener("close", () => {
      if (socket !== current) return;
      socket = undefined;
      connected = undefined;
      if (!closed && listeners.size > 0)
        setTimeout(() => void connect(), options.reconnectDelayMs ?? 1000);
    });
    return connected;
  }

  const bridge: Record<string, unknown> = {};
  for (const method of IPC_METHOD_NAMES) bridge[method] = (input?: unknown) => call(method, input);
  bridge.on = (event: string, listener: (payload: unknown) => void) => {
    const forward = (message: IpcEventMessage) => {
      if (message.event === event) listener(message.payload);
    };
    listeners.add(forward);
    void connect();
    return () => {
      listeners.delete(forward);
    };
  };
  bridge.whenConnected = () => connect();
  bridge.close = () => {
    closed = true;
    socket?.close();
  };
  return bridge as unknown as WebBridge;
}

/** The screens' API: each method resolves with its output or rejects with an `IpcCallError`. */
export function apiFromBridge(bridge: DesktopBridge): DesktopApi {
  const api: Record<string, unknown> = {};
  for (const method of IPC_METHOD_NAMES) {
    api[method] = async (input?: unknown) => {
      const call = bridge[method] as (input?: unknown) => Promise<IpcResult<unknown>>;
      const result = await call(input);
      if (!result.ok) throw new IpcCallError(result.error);
      return result.data;
    };
  }
  api.on = bridge.on.bind(bridge);
  return api as DesktopApi;
}

let shared: DesktopApi | undefined;

/** The app's API in this window: Electron's bridge, else web mode with the fragment's token. */
export function desktopApi(): DesktopApi {
  if (!shared) {
    const bridge =
      window.svcDesktop ??
      createWebBridge({
        baseUrl: window.location.origin,
        token: new URLSearchParams(window.location.hash.slice(1)).get("token") ?? "",
      });
    shared = apiFromBridge(bridge);
  }
  return shared;
}

export function hello(): Promise<AppInfo> {
  return desktopApi()["app.info"]();
}
