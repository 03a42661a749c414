// The app shell: header (name, connection and service status, theme), navigation between the
// five screens, and the current screen.
import { ErrorBoundary } from "../components/ErrorBoundary";
import { useAppInfo, useServiceState } from "../hooks/app";
import { useQueuedRenders } from "../hooks/queued-renders";
import { useAppliedTheme } from "../hooks/theme";
import { AccountScreen } from "../screens/AccountScreen";
import { HistoryScreen } from "../screens/HistoryScreen";
import { ProjectScreen } from "../screens/ProjectScreen";
import { QueueScreen } from "../screens/QueueScreen";
import { SettingsScreen } from "../screens/SettingsScreen";
import { serviceLabel } from "../service-label";
import { SCREENS, useUiStore, type Screen } from "../store";

const SCREEN_LABELS: Record<Screen, string> = {
  project: "Project",
  queue: "Queue",
  history: "History",
  account: "Account",
  settings: "Settings",
};

function Header() {
  const info = useAppInfo();
  const service = useServiceState();
  const theme = useAppliedTheme();
  const setTheme = useUiStore((state) => state.setTheme);
  return (
    <header className="app-header">
      <h1>svc Desktop</h1>
      <p role="status" className={info.error ? "conn conn-bad" : "conn"}>
        {info.data
          ? `Connected to svc ${info.data.version}`
          : info.error
            ? `Not connected: ${info.error.message}`
            : "Connecting…"}
      </p>
      <span className={`service service-${service.data?.status ?? "unknown"}`}>
        {serviceLabel(service.data)}
      </span>
      <button
        type="button"
        className="theme-toggle"
        aria-label={theme === "dark" ? "Use the light theme" : "Use the dark theme"}
        onClick={() => setTheme(theme === "dark" ? "light" : "dark")}
      >
        {theme === "dark" ? "☀" : "☾"}
      </button>
    </header>
  );
}

function Navigation() {
  const screen = useUiStore((state) => state.screen);
  const show = useUiStore((state) => state.show);
  const queuedRenders = useQueuedRenders();
  const running = (queuedRenders.data ?? []).filter(
    (queuedRender) => queuedRender.status === "running" || queuedRender.status === "waiting",
  ).length;
  return (
    <nav className="app-nav" aria-label="Screens">
      {SCREENS.map((name) => (
        <button
          key={name}
          type="button"
          aria-current={screen === name ? "page" : undefined}
          onClick={() => show(name)}
        >
          {SCREEN_LABELS[name]}
          {name === "queue" && running > 0 ? (
            <>
              {" "}
              <span className="count">{running}</span>
            </>
          ) : null}
        </button>
      ))}
    </nav>
  );
}

const SCREEN_COMPONENTS: Record<Screen, () => React.JSX.Element> = {
  project: ProjectScreen,
  queue: QueueScreen,
  history: HistoryScreen,
  account: AccountScreen,
  settings: SettingsScreen,
};

export function App() {
  const screen = useUiStore((state) => state.screen);
  const Current = SCREEN_COMPONENTS[screen];
  return (
    <div className="app">
      <Header />
      <Navigation />
      <main className="app-main" aria-label={SCREEN_LABELS[screen]}>
        <ErrorBoundary resetKey={screen}>
          <Current />
        </ErrorBoundary>
      </main>
    </div>
  );
}
