import { describe, expect, it } from "vitest";
import type { ServiceState } from "../shared/ipc";
import { serviceHostLabel, serviceLabel } from "./service-label";

const local = (status: ServiceState["status"]): ServiceState => ({
  mode: "local",
  status,
  url: "http://127.0.0.1:7733",
  restarts: 0,
  message: undefined,
});

describe("serviceLabel", () => {
  it("tells a new user renders start on this computer when they render, not that it is stopped", () => {
    expect(serviceLabel(local("stopped"))).toBe("Renders on this computer: starts when you render");
    expect(serviceLabel(local("ready"))).toBe("Renders on this computer: ready");
  });

  it("names a service by its host and never shows a loopback URL", () => {
    const remote = (url: string): ServiceState => ({ ...local("remote"), mode: "remote", url });
    expect(serviceLabel(remote("https://svc.example/v3"))).toBe(
      "Renders on a service: svc.example",
    );
    expect(serviceLabel(remote("http://127.0.0.1:43123"))).toBe(
      "Renders on a service: this computer",
    );
    expect(serviceHostLabel("http://localhost")).toBe("this computer");
  });
});
