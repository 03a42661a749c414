// `svc server`: run the render service, plus its admin commands (users, keys, credits). Thin:
// parse flags, call src/server, print. Nothing secret is printed except the key that
// `keys create` exists to show once.
import { InvalidArgumentError, Option, type Command } from "commander";
import { addCredits } from "../server/index";
import { createApiKey, createUser, findUserByEmail } from "../server/index";
import { LOCAL_SERVICE_PORT } from "../shared/limits";
import { defaultDataDir, loadConfig } from "../server/index";
import type { Database } from "../server/index";
import type { startServer } from "../server/start";
import type { ServerRole } from "../server/index";
import { checkPasswordStrength, setUserPassword } from "../server/index";
import { promptHidden, readPipedInput, type CliIo } from "./io";

/**
 * The service itself (fastify, the database drivers, pg-boss, the S3 client) loads only when a
 * command needs it: imported up front it added ~2 s to the start of every `svc` command, `svc
 * render` included.
 */
const loadService = () => import("../server/start");

function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`);
    }
    return Number(value);
  };
}

function credits(value: string): number {
  const number = Number(value);
  if (!/^-?\d+(\.\d+)?$/.test(value) || !Number.isFinite(number)) {
    throw new InvalidArgumentError("credits must be a number, e.g. 100.");
  }
  return number;
}

interface ServerOptions {
  role: ServerRole;
  host: string;
  port: number;
  dataDir: string;
  jobs?: number;
  /**
   * The old name of --jobs ("workers" is `svc render`'s browser pages): an operator's old command
   * line stops, naming the new flag, instead of starting with the default count.
   */
  workers?: string;
}

/** The service's database (SVC_DATABASE_URL, else SQLite in the data dir) for an admin command. */
async function withDatabase<T>(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  run: (db: Database) => Promise<T>,
): Promise<T> {
  const { openServiceDatabase } = await loadService();
  const db = await openServiceDatabase(loadConfig({ dataDir }, env));
  try {
    return await run(db);
  } finally {
    await db.destroy();
  }
}

/** A password from a hidden terminal prompt, or the first line of piped stdin. */
async function readPassword(io: CliIo): Promise<string> {
  if (!io.stdin.isTTY) return (await readPipedInput(io)).split(/\r?\n/)[0] ?? "";
  return promptHidden(io, "Password: ", () => new Error("interrupted"));
}

function fail(io: CliIo, message: string): void {
  io.stderr.write(`svc server: ${message}\n`);
  io.exitCode = 1;
}

export function registerServerCommand(program: Command, io: CliIo): void {
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const warn = (line: string) => io.stderr.write(`${line}\n`);
  const server = program
    .command("server")
    .description("Run the render service (the /v3 API) on this computer, and manage its accounts.")
    .addOption(
      new Option(
        "--role <role>",
        "all: API and workers in one process; api or worker: one part of the scale-out shape (needs SVC_DATABASE_URL and SVC_STORAGE_URL)",
      )
        .choices(["all", "api", "worker"])
        .default("all"),
    )
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option(
      "--port <port>",
      "port to listen on (0 picks a free one)",
      integer("--port", 0, 65535),
      LOCAL_SERVICE_PORT,
    )
    .option("--data-dir <dir>", "database, uploads and videos", defaultDataDir())
    .option(
      "--jobs <n>",
      "queue jobs this process runs at a time (0: API only)",
      integer("--jobs", 0, 64),
    )
    .addOption(new Option("--workers <n>").hideHelp())
    .action(async (options: ServerOptions) => {
      let config: ReturnType<typeof loadConfig>;
      let running: Awaited<ReturnType<typeof startServer>>;
      try {
        if (options.workers !== undefined)
          throw new Error(
            `--workers is now --jobs (the queue jobs this process runs at a time; 0: API only): use --jobs ${options.workers}`,
          );
        config = loadConfig(
          {
            role: options.role,
            host: options.host,
            port: options.port,
            dataDir: options.dataDir,
            ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
          },
          io.env,
        );
        running = await (await loadService()).startServer(config);
      } catch (error) {
        fail(io, (error as Error).message);
        // Exit now, non-zero, whatever a half-made start left open (a pool, a timer): an
        // orchestrator restarts a process that exits, not one that hangs.
        process.exit(1);
      }
      if (running.createdCredentialsFile) {
        say(
          `svc server created the local account; its API key is in ${running.createdCredentialsFile}`,
        );
      }
      say(`svc server listening on ${running.url}`);
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          say(
            `svc server stopping (${signal}); running renders get ${config.shutdownGraceSeconds} s to finish`,
          );
          void running.close().then(resolve, (error: unknown) => {
            warn(`svc server: shutdown failed: ${(error as Error).message}`);
            resolve();
          });
        };
        process.once("SIGINT", () => stop("SIGINT"));
        process.once("SIGTERM", () => stop("SIGTERM"));
      });
      process.exit(io.exitCode);
    });

  const dataDirOf = (command: Command): string =>
    (command.optsWithGlobals() as ServerOptions).dataDir;

  const users = server.command("users").description("Manage accounts");

  users
    .command("password")
    .argument("<email>", "account whose password to set")
    .description(
      "Set or replace an account's password for browser sign-in (hidden prompt, or one line on stdin)",
    )
    .action(async (email: string, _options: unknown, command: Command) => {
      const password = await readPassword(io);
      const problem = checkPasswordStrength(password);
      if (problem) return fail(io, problem);
      await withDatabase(dataDirOf(command), io.env, async (db) => {
        const user = await findUserByEmail(db, email);
        if (!user) return fail(io, `no user ${email}`);
        await setUserPassword(db, user.id, password);
        say(`set the password of ${user.email}`);
      });
    });

  users
    .command("add")
    .argument("<email>", "email address of the new account")
    .option("--credits <n>", "starting credits", credits, 0)
    .option(
      "--password",
      "set a password for browser sign-in (hidden prompt, or one line piped on stdin)",
    )
    .description("Create an account (then `svc server keys create --user EMAIL` gives it a key)")
    .action(
      async (email: string, options: { credits: number; password?: boolean }, command: Command) => {
        let password: string | undefined;
        if (options.password) {
          password = await readPassword(io);
          const problem = checkPasswordStrength(password);
          if (problem) return fail(io, problem);
        }
        await withDatabase(dataDirOf(command), io.env, async (db) => {
          try {
            const user = await createUser(db, {
              email,
              credits: options.credits,
              plan: "standard",
            });
            if (password !== undefined) await setUserPassword(db, user.id, password);
            say(
              `created user ${user.email} with ${options.credits} credits${password !== undefined ? " and a password" : ""}`,
            );
          } catch (error) {
            fail(io, (error as Error).message);
          }
        });
      },
    );

  server
    .command("keys")
    .description("Manage API keys")
    .command("create")
    .requiredOption("--user <email>", "account the key belongs to")
    .description("Create an API key and print it (it is shown only this once)")
    .action(async (options: { user: string }, command: Command) => {
      await withDatabase(dataDirOf(command), io.env, async (db) => {
        const user = await findUserByEmail(db, options.user);
        if (!user)
          return fail(
            io,
            `no user ${options.user}; create it with \`svc server users add ${options.user}\``,
          );
        const key = await createApiKey(db, user.id);
        warn(`API key for ${user.email} (shown only once; store it now):`);
        say(key);
      });
    });

  server
    .command("credits")
    .description("Manage credits")
    .command("add")
    .argument("<email>", "account to credit")
    .argument("<n>", "credits to add (negative to remove)", credits)
    .description("Add credits to an account")
    .action(async (email: string, amount: number, _options: unknown, command: Command) => {
      await withDatabase(dataDirOf(command), io.env, async (db) => {
        const user = await findUserByEmail(db, email);
        if (!user) return fail(io, `no user ${email}`);
        const balance = await addCredits(db, user.id, amount);
        say(`${user.email} now has ${balance} credits`);
      });
    });
}
