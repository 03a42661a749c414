#!/usr/bin/env node
// `npm test`: typecheck, lint, unit tests, e2e tests, then the container tests, one after the
// other, stopping at the first that fails. The container tests' images are built from the start
// in the background (deploy/container/build-images.ts, at a lower CPU priority): from an empty
// podman store, as on a fresh CI machine, they take 6-8 minutes, much of it waiting on Debian's
// and npm's registries or on one compiler, time the unit and e2e tests leave spare. CI must stay
// under 35 minutes on 2 cores (issue 36; bench/README.md, "CI on a fresh machine").
//
// The build's output goes to a log file, named at the start, and is printed when it fails; the
// build never outlives this script (a failed phase or Ctrl-C stops it). SVC_TEST_NO_PREBUILD=1
// builds the images in the container tests' own global setup instead, after the rest.
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const PHASES = ["typecheck", "lint", "test:unit", "test:e2e", "test:containers"];
const say = (line) => process.stderr.write(`npm test: ${line}\n`);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** The background build: its process, its exit (code), and where it writes. */
let build;
let phase;

function startBuild() {
  if (/^(1|true|yes|on)$/i.test(process.env.SVC_TEST_NO_PREBUILD ?? "")) return undefined;
  if (process.platform !== "linux") return undefined;
  const dir = mkdtempSync(join(tmpdir(), "svc-images-"));
  const log = join(dir, "build.log");
  const out = join(dir, "built.json");
  const tsx = join(root, "node_modules/tsx/dist/cli.mjs");
  const script = join(root, "deploy/container/build-images.ts");
  const fd = openSync(log, "w");
  // nice: the tests keep the CPU they need (several check timings under load generously, but
  // they are the critical path); the builds take what the tests leave idle. Its own process
  // group, so stopping it reaches podman and everything under it.
  const child = spawn("nice", ["-n", "10", process.execPath, tsx, script, out], {
    cwd: root,
    stdio: ["ignore", fd, fd],
    detached: true,
  });
  const started = Date.now();
  const exited = new Promise((resolve) => {
    child.on("error", (error) => resolve({ code: 1, error }));
    child.on("exit", (code, signal) => resolve({ code: code ?? (signal ? 128 : 1) }));
  });
  say(`building the container images in the background (log: ${log})`);
  return { child, exited, dir, log, out, started };
}

/** Stops the background build (SIGTERM to its group, SIGKILL after 30 s) and waits for it. */
async function stopBuild() {
  if (!build) return;
  const { child, exited } = build;
  if (child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, 30_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(build.dir, { recursive: true, force: true });
  build = undefined;
}

function logTail(file, lines = 60) {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

function loadAverage() {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

function runPhase(name, env) {
  return new Promise((resolve) => {
    phase = spawn(npm, ["run", name], { cwd: root, stdio: "inherit", env });
    phase.on("error", () => resolve(1));
    phase.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

async function main() {
  build = startBuild();
  for (const name of PHASES) {
    let env = process.env;
    if (name === "test:containers" && build) {
      if (build.child.exitCode === null) say("waiting for the container images' build");
      const { code } = await build.exited;
      const seconds = Math.round((Date.now() - build.started) / 1000);
      if (code === 0) {
        say(`the container images were built in the background (${seconds} s after the start)`);
        env = { ...process.env, SVC_CONTAINER_IMAGES_BUILT: build.out };
      } else if (code === 3) {
        // podman cannot run here: the container tests say why (skip, or fail in CI).
        say(logTail(build.log, 5));
      } else {
        say(`the container images failed to build (exit ${code}); the end of ${build.log}:`);
        process.stderr.write(`${logTail(build.log)}\n`);
        // Whatever it left in its process group goes too; the log stays.
        try {
          process.kill(-build.child.pid, "SIGKILL");
        } catch {
          // nothing left
        }
        build = undefined;
        return 1;
      }
    }
    const phaseStarted = Date.now();
    const code = await runPhase(name, env);
    phase = undefined;
    // Each phase's wall time and the load, for CI's 35-minute budget (bench/README.md).
    say(`${name}: ${Math.round((Date.now() - phaseStarted) / 1000)} s, load ${loadAverage()}`);
    if (code !== 0) {
      say(`${name} failed (exit ${code})`);
      await stopBuild();
      return code;
    }
  }
  await stopBuild();
  return 0;
}

/** Passes the signal to the running phase and waits for it (SIGKILL after 30 s). */
async function stopPhase(signal) {
  const child = phase;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  await exited;
  clearTimeout(timer);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    void Promise.all([stopPhase(signal), stopBuild()]).then(() => process.exit(130));
  });
}

process.exitCode = await main();
