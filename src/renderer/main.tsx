// Renderer entry. The full UI arrives with the desktop-app issues; for now the shell shows that
// it reaches the main process through the same transport the real screens will use.
import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { hello, type AppInfo } from "./transport";

function App() {
  const [info, setInfo] = useState<AppInfo | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    hello().then(setInfo, (e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, []);
  return (
    <main style={{ fontFamily: "system-ui, sans-serif", padding: 32 }}>
      <h1>svc Desktop</h1>
      <p role="status">
        {info
          ? `Connected to svc ${info.version}`
          : error
            ? `Not connected: ${error}`
            : "Connecting…"}
      </p>
    </main>
  );
}

const container = document.getElementById("root");
if (container) {
  createRoot(container).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
