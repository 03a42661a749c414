import { describe, expect, it } from "vitest";
import { networkAllows } from "./network";

describe("network access beyond the project", () => {
  it("lets an origin list reach only those origins, by exact origin", () => {
    const access = { origins: ["https://cdn.example.com"] };
    expect(networkAllows(access, "https://cdn.example.com/logo.png")).toBe(true);
    expect(networkAllows(access, "https://cdn.example.com:8443/logo.png")).toBe(false);
    expect(networkAllows(access, "http://cdn.example.com/logo.png")).toBe(false);
    expect(networkAllows(access, "https://cdn.example.com.evil.test/logo.png")).toBe(false);
    expect(networkAllows(access, "http://127.0.0.1:8080/")).toBe(false);
    expect(networkAllows(access, "not a url")).toBe(false);
  });

  it("keeps true and false meaning everything over http(s) and nothing", () => {
    expect(networkAllows(true, "http://169.254.169.254/latest/meta-data")).toBe(true);
    expect(networkAllows(true, "file:///etc/passwd")).toBe(false);
    expect(networkAllows(false, "https://cdn.example.com/logo.png")).toBe(false);
  });
});
