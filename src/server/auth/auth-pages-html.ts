// The HTML of the sign-in pages: sign-in, consent, device code entry and confirmation, and
// result/error pages. Plain server-rendered strings with every value escaped, inline styles and
// no scripts or external assets (the CSP in auth-pages.ts forbids them anyway).

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const STYLE = `
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f4f5f7;color:#1c1e21;margin:0}
main{max-width:26rem;margin:10vh auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 2px 12px rgba(0,0,0,.08)}
h1{font-size:1.35rem;margin:0 0 1rem}
label{display:block;margin:.8rem 0 .25rem;font-weight:600}
input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #c4c8cf;border-radius:6px;font-size:1rem}
input.code{font-family:ui-monospace,monospace;letter-spacing:.15em;text-transform:uppercase}
button{margin-top:1.2rem;padding:.6rem 1.2rem;border-radius:6px;border:1px solid #2456d6;background:#2f6bff;color:#fff;font-size:1rem;cursor:pointer}
button.secondary{background:#fff;color:#2456d6;margin-left:.5rem}
.error{background:#fdecec;color:#8a1c1c;padding:.6rem .8rem;border-radius:6px}
.muted{color:#5f6670;font-size:.9rem}
code{font-family:ui-monospace,monospace}
`;

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · svc</title>
<style>${STYLE}</style>
</head>
<body><main>
${body}
</main></body>
</html>
`;
}

function hidden(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(
      ([name, value]) =>
        `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`,
    )
    .join("\n");
}

function errorBox(message: string | undefined): string {
  return message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : "";
}

export function signInPage(input: {
  csrf: string;
  next: string;
  email?: string;
  error?: string;
}): string {
  return page(
    "Sign in",
    `<h1>Sign in to svc</h1>
${errorBox(input.error)}
<form method="post" action="/oauth/signin">
${hidden({ csrf: input.csrf, next: input.next })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(input.email ?? "")}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" name="signin" value="1">Sign in</button>
</form>`,
  );
}

const CLIENT_NAMES: Record<string, string> = { "svc-cli": "the svc command line and desktop app" };

function clientName(clientId: string): string {
  return CLIENT_NAMES[clientId] ?? clientId;
}

export function consentPage(input: {
  csrf: string;
  email: string;
  clientId: string;
  scope: string;
  fields: Record<string, string | undefined>;
  action: string;
}): string {
  return page(
    "Allow access",
    `<h1>Allow access to your account?</h1>
<p><strong>${escapeHtml(clientName(input.clientId))}</strong> (<code>${escapeHtml(input.clientId)}</code>)
wants to render videos and read your credits as <strong>${escapeHtml(input.email)}</strong>.</p>
<p class="muted">Scope: <code>${escapeHtml(input.scope)}</code>. You can sign it out at any time with <code>svc auth logout</code>.</p>
<form method="post" action="${escapeHtml(input.action)}">
${hidden({ csrf: input.csrf, ...input.fields })}
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

export function deviceEntryPage(input: {
  csrf: string;
  email: string;
  userCode?: string;
  error?: string;
}): string {
  return page(
    "Connect a device",
    `<h1>Connect a device</h1>
<p>Enter the code that svc shows (in your terminal or the app). You are signed in as <strong>${escapeHtml(input.email)}</strong>.</p>
${errorBox(input.error)}
<form method="post" action="/device">
${hidden({ csrf: input.csrf })}
<label for="user_code">Code</label>
<input id="user_code" name="user_code" type="text" class="code" autocomplete="off" autocapitalize="characters" placeholder="XXXX-XXXX" required value="${escapeHtml(input.userCode ?? "")}">
<button type="submit">Continue</button>
</form>`,
  );
}

export function messagePage(title: string, message: string, status: "ok" | "error" = "ok"): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
${status === "error" ? errorBox(message) : `<p>${escapeHtml(message)}</p>`}`,
  );
}

/** An OAuth error that must not be sent back to the client (bad client or redirect URI). */
export function oauthErrorPage(code: string, description: string): string {
  return page(
    "Sign-in request refused",
    `<h1>This sign-in request cannot be used</h1>
<p class="error" role="alert"><code id="error-code">${escapeHtml(code)}</code>: ${escapeHtml(description)}</p>
<p class="muted">Start the sign-in again from the svc command line or desktop app.</p>`,
  );
}
