// The render service's second door: starting it. Apart from index.ts so that the CLI loads the
// service (HTTP server, queue, database drivers) only when `svc server` starts it or opens its
// database.
export { openServiceDatabase, startServer } from "./server";
