// Account: who the app renders as, where the credential comes from, credits; API-key sign-in and
// sign-out. (Browser and device-code sign-in are not in the IPC contract yet.)
import { useState } from "react";
import { ErrorNote } from "../components/ErrorNote";
import { useApiKeyLogin, useAuthStatus, useLogout } from "../hooks/account";

const SOURCE_LABELS: Record<string, string> = {
  "env:SVC_API_KEY": "SVC_API_KEY environment variable",
  "env:SVC_ALIAS_API_KEY": "SVC_ALIAS_API_KEY environment variable",
  "credentials-file": "saved credentials",
  "local-service": "the local service's own key",
};

export function AccountScreen() {
  const status = useAuthStatus();
  const login = useApiKeyLogin();
  const logout = useLogout();
  const [apiKey, setApiKey] = useState("");
  const data = status.data;
  return (
    <div className="screen narrow">
      <h2 className="screen-title">Account</h2>
      {status.isPending ? <p role="status">Checking the sign-in…</p> : null}
      {status.error ? <ErrorNote error={status.error} title="Could not read the sign-in." /> : null}
      {data ? (
        <section className="panel" aria-labelledby="account-status-title">
          <h3 id="account-status-title">{data.signedIn ? "Signed in" : "Not signed in"}</h3>
          <dl className="facts vertical">
            <div>
              <dt>Service</dt>
              <dd>{data.service || "–"}</dd>
            </div>
            <div>
              <dt>Credential</dt>
              <dd>
                {data.source ? (SOURCE_LABELS[data.source] ?? data.source) : "none"}
                {data.kind ? ` (${data.kind === "api_key" ? "API key" : "browser sign-in"})` : ""}
              </dd>
            </div>
            {data.user ? (
              <div>
                <dt>User</dt>
                <dd data-testid="account-user">
                  {data.user.username} · {data.user.email}
                </dd>
              </div>
            ) : null}
            {data.credits ? (
              <div>
                <dt>Credits</dt>
                <dd>
                  {data.credits.remaining.toLocaleString()} left ·{" "}
                  {data.credits.used.toLocaleString()} used · {data.credits.plan} plan
                </dd>
              </div>
            ) : null}
          </dl>
          {data.problem ? (
            <ErrorNote error={Object.assign(new Error(data.problem.message), data.problem)} />
          ) : null}
          {data.signedIn && data.source === "credentials-file" ? (
            <button
              type="button"
              onClick={() => logout.mutate(undefined)}
              disabled={logout.isPending}
            >
              Sign out
            </button>
          ) : null}
          {logout.error ? <ErrorNote error={logout.error} /> : null}
        </section>
      ) : null}
      {data && data.source !== "local-service" ? (
        <section className="panel" aria-labelledby="api-key-title">
          <h3 id="api-key-title">
            {data.signedIn ? "Use a different API key" : "Sign in with an API key"}
          </h3>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              login.mutate(apiKey, { onSuccess: () => setApiKey("") });
            }}
          >
            <label>
              API key
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
          <p className="muted">
            Browser and device-code sign-in are not in the app yet; <code>svc auth login</code> in a
            terminal signs this computer in for the app too.
          </p>
        </section>
      ) : null}
    </div>
  );
}
