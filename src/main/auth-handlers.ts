// The `auth.*` IPC methods: the status of the service connection's credential plus a browser or
// device sign-in in progress (auth-signin.ts), API-key sign-in, cancel and sign-out. A browser or
// device sign-in that ends after `auth.login` answered is announced as an `auth` event.
import type { AuthStatus } from "../shared/ipc";
import { DesktopSignIn } from "./auth-signin";
import type { DesktopHost } from "./host";
import type { IpcEventHub, IpcHandlers } from "./ipc-router";
import type { ServiceConnection } from "./service-connection";

type AuthHandlers = Pick<IpcHandlers, "auth.status" | "auth.login" | "auth.logout" | "auth.cancel">;

export function authHandlers(options: {
  connection: ServiceConnection;
  host: DesktopHost;
  events: IpcEventHub;
  userAgent: string;
}): AuthHandlers {
  const { connection, events } = options;
  const status = async (): Promise<AuthStatus> => ({
    ...(await connection.authStatus()),
    ...signIn.view(),
  });
  const signIn: DesktopSignIn = new DesktopSignIn({
    target: () => connection.signInTarget(),
    openUrl: (url) => options.host.openExternal(url).catch(() => false),
    onSettled: () => void status().then((current) => events.emit("auth", current)),
    userAgent: options.userAgent,
  });
  return {
    "auth.status": status,
    "auth.login": async (input) => {
      if (input.method === "api-key") {
        await connection.loginWithApiKey(input.apiKey);
      } else {
        await signIn.start(input.method);
      }
      return status();
    },
    "auth.cancel": async () => {
      signIn.cancel();
      return status();
    },
    "auth.logout": async () => {
      signIn.cancel();
      await connection.logout();
      return status();
    },
  };
}
