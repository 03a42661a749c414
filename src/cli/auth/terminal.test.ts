import { describe, expect, it } from "vitest";
import { deviceLoginRefusal, remoteTerminalReason } from "./terminal";

describe("sign-in in this terminal", () => {
  it("refuses the device flow in CI or without a terminal, and the browser flow over SSH", () => {
    const tty = { stdin: true, stdout: true };
    expect(deviceLoginRefusal({ CI: "true" }, tty)).toMatch(/CI/);
    expect(deviceLoginRefusal({ CI: "0" }, tty)).toBeUndefined();
    expect(deviceLoginRefusal({}, { stdin: true, stdout: false })).toMatch(/terminal/);
    expect(remoteTerminalReason({ SSH_CONNECTION: "1.2.3.4 5 6.7.8.9 22" }, tty)).toMatch(/SSH/);
    expect(remoteTerminalReason({}, { stdin: false, stdout: true })).toMatch(/terminal/);
    expect(remoteTerminalReason({}, tty)).toBeUndefined();
  });
});
