import { describe, expect, it } from "vitest";
import type { ServiceState } from "../shared/ipc";
import { serviceLabel } from "./service-label";

const local = (status: ServiceState["status"]): ServiceState => ({
  mode: "local",
  status,
  url: "http://127.0.0.1:7733",
  restarts: 0,
  message: undefined,
});

describe("serviceLabel", () => {
  it("tells a new user the local service starts when they render, not that it is stopped", () => {
    expect(serviceLabel(local("stopped"))).toBe("Local service: starts when you render");
    expect(serviceLabel(local("ready"))).toBe("Local service: ready");
    expect(serviceLabel({ ...local("remote"), mode: "remote", url: "https://svc.example" })).toBe(
      "Service: https://svc.example",
    );
  });
});
