// The desktop app's main process without a window, for tests that must kill it: web mode with
// the environment it was started with. Prints `{"origin", "token"}` as one JSON line when ready.
import { runWebMode } from "../web";
import { REPO } from "./support";

const server = await runWebMode(REPO, process.env);
process.stdout.write(`${JSON.stringify({ origin: server.origin, token: server.token })}\n`);
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
