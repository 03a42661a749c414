// OAuth sign-in for the CLI and the desktop app (SPEC.md section 5), one module per step: the
// protocol calls (protocol.ts), the loopback listener (loopback.ts), browser sign-in
// (browser-login.ts), device sign-in (device-login.ts) and the stored session: save, refresh,
// sign-out (session.ts). Environment heuristics (SSH, CI, a terminal) are the CLI's
// (src/cli/auth/terminal.ts).
export * from "./protocol";
export * from "./loopback";
export * from "./browser-login";
export * from "./device-login";
export * from "./session";
