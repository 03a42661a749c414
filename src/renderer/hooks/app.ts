// App-wide server state: the app's identity and the render service's state (pushed as `service`
// events and written straight into the query cache, so every screen sees the same value).
import { useEffect } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { ServiceState } from "../../shared/ipc";
import { desktopApi } from "../transport";

export function useAppInfo() {
  return useQuery({ queryKey: ["app.info"], queryFn: () => desktopApi()["app.info"]() });
}

export function useServiceState() {
  const client = useQueryClient();
  useEffect(
    () =>
      desktopApi().on("service", (state: ServiceState) =>
        client.setQueryData(["service.state"], state),
      ),
    [client],
  );
  return useQuery({ queryKey: ["service.state"], queryFn: () => desktopApi()["service.state"]() });
}
