// Account: who the app renders as, where the credential comes from, credits; sign-in through the
// browser, with a device code, or with an API key; sign-out. Browser and device sign-in run in the
// main process (the same flows as `svc auth login`): this screen shows the page link or the code
// while it waits, and the outcome arrives as an `auth` event (hooks/account.ts).
import { useState } from "react";
import { IpcCallError, type AuthStatus, type PendingSignIn } from "../../shared/ipc";
import { ErrorNote } from "../components/ErrorNote";
import { serviceHostLabel } from "../service-label";
import {
  useApiKeyLogin,
  useAuthStatus,
  useLogout,
  useSignInCancel,
  useSignInStart,
} from "../hooks/account";

const SOURCE_LABELS: Record<string, string> = {
  "env:SVC_API_KEY": "a key set where the app was started (it signs out there)",
  "env:SVC_ALIAS_API_KEY": "a key set where the app was started (it signs out there)",
  "credentials-file": "saved on this computer",
  keychain: "the system keychain",
  "local-service": "this computer (no account needed)",
};

export function AccountScreen() {
  const status = useAuthStatus();
  const data = status.data;
  return (
    <div className="screen narrow">
      <h2 className="screen-title">Account</h2>
      {status.isPending ? <p role="status">Checking the sign-in…</p> : null}
      {status.error ? <ErrorNote error={status.error} title="Could not read the sign-in." /> : null}
      {data ? <StatusPanel status={data} /> : null}
      {data && data.source !== "local-service" ? <SignInPanel status={data} /> : null}
      {data && data.source !== "local-service" ? <ApiKeyPanel signedIn={data.signedIn} /> : null}
    </div>
  );
}

function StatusPanel({ status }: { status: AuthStatus }) {
  const logout = useLogout();
  const local = status.source === "local-service";
  const canSignOut =
    status.signedIn && (status.source === "credentials-file" || status.source === "keychain");
  return (
    <section className="panel" aria-labelledby="account-status-title">
      <h3 id="account-status-title">{status.signedIn ? "Signed in" : "Not signed in"}</h3>
      <dl className="facts vertical">
        <div>
          <dt>Renders</dt>
          <dd data-testid="account-service">
            {local
              ? "Render on this computer"
              : `Render on a service: ${serviceHostLabel(status.service)}`}
          </dd>
        </div>
        <div>
          <dt>Signed in with</dt>
          <dd>
            {status.source ? (SOURCE_LABELS[status.source] ?? status.source) : "nothing yet"}
            {status.kind && !local
              ? ` (${status.kind === "api_key" ? "a key" : "a browser sign-in"})`
              : ""}
          </dd>
        </div>
        {status.user ? (
          <div>
            <dt>User</dt>
            <dd data-testid="account-user">
              {status.user.username} · {status.user.email}
            </dd>
          </div>
        ) : null}
        {status.credits ? (
          <div>
            <dt>Credits</dt>
            <dd>
              {status.credits.remaining.toLocaleString()} left ·{" "}
              {status.credits.used.toLocaleString()} used · {status.credits.plan} plan
            </dd>
          </div>
        ) : null}
      </dl>
      {status.problem ? <ErrorNote error={new IpcCallError(status.problem)} /> : null}
      {canSignOut ? (
        <button type="button" onClick={() => logout.mutate(undefined)} disabled={logout.isPending}>
          Sign out
        </button>
      ) : null}
      {logout.error ? <ErrorNote error={logout.error} title="Sign-out failed." /> : null}
    </section>
  );
}

function SignInPanel({ status }: { status: AuthStatus }) {
  const start = useSignInStart();
  const cancel = useSignInCancel();
  const pending = status.signIn;
  const busy = start.isPending || cancel.isPending;
  return (
    <section className="panel" aria-labelledby="sign-in-title">
      <h3 id="sign-in-title">{status.signedIn ? "Sign in as someone else" : "Sign in"}</h3>
      <p className="muted">
        Sign in with your account on {serviceHostLabel(status.service)}: in a browser on this
        computer, or with a code you enter on any device.
      </p>
      <div className="actions">
        <button
          type="button"
          className={pending || status.signedIn ? undefined : "primary"}
          disabled={busy}
          onClick={() => start.mutate("browser")}
        >
          Sign in with browser
        </button>
        <button type="button" disabled={busy} onClick={() => start.mutate("device")}>
          Sign in with device code
        </button>
      </div>
      {start.isPending ? <p role="status">Starting the sign-in…</p> : null}
      {pending ? <PendingSignInNote pending={pending} /> : null}
      {pending ? (
        <div className="actions">
          <button
            type="button"
            disabled={cancel.isPending}
            onClick={() => cancel.mutate(undefined)}
          >
            Cancel sign-in
          </button>
        </div>
      ) : null}
      {start.error ? <ErrorNote error={start.error} title="Sign-in failed." /> : null}
      {!pending && status.signInError ? (
        <ErrorNote error={new IpcCallError(status.signInError)} title="Sign-in failed." />
      ) : null}
      {cancel.error ? <ErrorNote error={cancel.error} /> : null}
    </section>
  );
}

/** The shared note style, with the accent instead of the warning colour: this is progress. */
const WAITING_NOTE = {
  borderLeftColor: "var(--accent)",
  display: "grid",
  gap: "8px",
  padding: "10px 12px",
} as const;

function expiryText(expiresAt: number): string {
  return new Date(expiresAt).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function PendingSignInNote({ pending }: { pending: PendingSignIn }) {
  if (pending.method === "browser") {
    return (
      <div role="status" aria-label="Browser sign-in" className="note" style={WAITING_NOTE}>
        <p>
          {pending.browserOpened
            ? "Your browser opened the sign-in page. Sign in there and allow access; if it did not open, open this link:"
            : "Open this link in a browser on this computer, sign in and allow access:"}
        </p>
        <p className="command" style={{ fontSize: "12px" }}>
          <a href={pending.url} target="_blank" rel="noreferrer" data-testid="sign-in-link">
            {pending.url}
          </a>
        </p>
        <p className="hint">Waiting for the browser until {expiryText(pending.expiresAt)}…</p>
      </div>
    );
  }
  return (
    <div role="status" aria-label="Device sign-in" className="note" style={WAITING_NOTE}>
      <p>
        On any device, open{" "}
        <a href={pending.urlWithCode ?? pending.url} target="_blank" rel="noreferrer">
          {pending.url}
        </a>{" "}
        and enter this code:
      </p>
      <p
        className="command"
        data-testid="device-code"
        style={{ fontSize: "24px", letterSpacing: "0.12em", fontWeight: 600, textAlign: "center" }}
      >
        {pending.userCode}
      </p>
      <p className="hint">
        Waiting for approval; the code expires at {expiryText(pending.expiresAt)}.
      </p>
    </div>
  );
}

function ApiKeyPanel({ signedIn }: { signedIn: boolean }) {
  const login = useApiKeyLogin();
  const [apiKey, setApiKey] = useState("");
  return (
    <section className="panel" aria-labelledby="api-key-title">
      <h3 id="api-key-title">{signedIn ? "Use a different account key" : "Sign in with a key"}</h3>
      <p className="hint-line">
        A key the service gave you (on its website, or from whoever runs it), instead of signing in
        with a browser.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          login.mutate(apiKey, { onSuccess: () => setApiKey("") });
        }}
      >
        <label>
          Account key
          <input
            type="password"
            autoComplete="off"
            value={apiKey}
            onChange={(event) => setApiKey(event.target.value)}
          />
        </label>
        <button
          type="submit"
          className="primary"
          disabled={apiKey.trim().length < 8 || login.isPending}
        >
          Sign in
        </button>
      </form>
      {login.error ? <ErrorNote error={login.error} title="Sign-in failed." /> : null}
    </section>
  );
}
