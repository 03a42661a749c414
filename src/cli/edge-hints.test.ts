// The same core and engine errors, as the CLI and the desktop app word them: the CLI names its
// commands and flags, the app its screens and buttons and never a flag.
import { describe, expect, it } from "vitest";
import { ClientError } from "../core/errors";
import { EngineError } from "../engine/errors";
import { desktopHint } from "../main/hints";
import { cliHint } from "./hints";
import { describeError } from "./errors";
import { toIpcError } from "../main/ipc-errors";

const cases: Array<[string, ClientError]> = [
  ["a rejected API key", new ClientError("authentication_failed", "bad key", "Sign in again.")],
  [
    "an expired sign-in",
    new ClientError("authentication_failed", "expired", "Sign in again.", {
      params: { credential: "oauth" },
    }),
  ],
  [
    "a render that outlived the wait",
    new ClientError("max_wait_exceeded", "slow", "later", { params: { renderId: "rndr_x" } }),
  ],
  [
    "a failed render",
    new ClientError("page_error", "boom", "fix it", {
      params: { renderId: "rndr_x", topic: "render_failed" },
    }),
  ],
  [
    "a cut-off download",
    new ClientError("network_error", "cut", "again", {
      params: { renderId: "rndr_x", topic: "download" },
    }),
  ],
  ["an unreachable service", new ClientError("network_error", "down", "check")],
  [
    "strict variables",
    new ClientError("svc_project_invalid", "bad", "fix", { params: { strict: "yes" } }),
  ],
  [
    "a composition outside the project",
    new ClientError("composition_outside_project", "outside", "inside", { usage: true }),
  ],
  [
    "an aspect ratio conflict",
    new ClientError("aspect_mismatch", "9:16 vs 16:9", "detect", {
      usage: true,
      params: { requested: "9:16", detected: "16:9" },
    }),
  ],
  ["an expired device code", new ClientError("expired_token", "expired", "again")],
];

describe("hints at the edges", () => {
  it.each(cases)("the CLI names its commands or flags for %s", (_name, error) => {
    const hint = describeError(error).hint ?? "";
    expect(hint).toBe(cliHint(error));
    expect(hint).toMatch(/`svc [a-z]|--[a-z]|SVC_API_URL|-c\//);
  });

  it.each(cases)("the app names no CLI flag or command for %s", (_name, error) => {
    const hint = toIpcError(error).hint ?? "";
    expect(hint).toBe(desktopHint(error));
    expect(hint).not.toMatch(/--[a-z]|`svc |svc [a-z]+ [a-z]|SVC_/);
    expect(hint.length).toBeGreaterThan(10);
  });

  it("keeps the error's own hint where an edge has nothing to add", () => {
    const error = new ClientError("svc_insufficient_credits", "no credits", "Add credits.");
    expect(describeError(error).hint).toBe("Add credits.");
    expect(toIpcError(error).hint).toBe("Add credits.");
  });

  it("words engine failures for `svc render`", () => {
    const error = new EngineError("invalid_options", "workers: 0", "Use 2 workers.", undefined, {
      option: "workers",
    });
    expect(describeError(error).hint).toBe("Use --workers 2 or --workers auto.");
  });
});
