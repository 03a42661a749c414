// Renderer entry: react-query for the main process's data, then the app shell.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { App } from "./app/App";
import "./styles.css";

const queryClient = new QueryClient({
  defaultOptions: {
    // The main process pushes what changes (queued renders, service state); the rest is refreshed
    // on demand.
    queries: { refetchOnWindowFocus: false, staleTime: 5_000 },
  },
});

const container = document.getElementById("root");
if (container) {
  createRoot(container).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </StrictMode>,
  );
}
