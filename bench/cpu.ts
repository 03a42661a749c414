// CPU accounting for benchmarks. A render is a tree of processes (Node, Chromium's browser,
// renderer, GPU/viz and utility processes, FFmpeg), and Chromium's children are not in any
// parent's rusage, so we count two ways:
//   machine  whole-machine busy time from /proc/stat deltas (everything on the machine, including
//            other people's work on a shared box: an upper bound)
//   tree     the render's own process tree, through a cgroup v1 cpuacct group the child is started
//            in (exact, not disturbed by other load); absent where cgroups are not writable.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Kernel clock ticks per second (USER_HZ), 100 on every Linux we run on. */
const USER_HZ = 100;
const CPUACCT = "/sys/fs/cgroup/cpuacct";

export interface CpuTimes {
  /** Core-seconds busy (user + nice + system + irq + softirq + steal). */
  busy: number;
  /** Core-seconds in the kernel (system + irq + softirq). */
  system: number;
}

/** The aggregate "cpu" line of /proc/stat: jiffies in user, nice, system, idle, iowait, ... */
function procStatCpu(): number[] {
  return readFileSync("/proc/stat", "utf8")
    .split("\n")[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
}

export async function machineCpu(): Promise<CpuTimes> {
  const [user, nice, system, , , irq, softirq, steal] = procStatCpu();
  return {
    busy: (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / USER_HZ,
    system: (system! + irq! + softirq!) / USER_HZ,
  };
}

export interface RunResult {
  wallSeconds: number;
  machine: CpuTimes;
  /** The process tree's own CPU, when cgroups are available. */
  tree: CpuTimes | undefined;
  /** Processes of the tree still alive when the main process exited (left-over children). */
  leftovers: number;
  exitCode: number | null;
  stderrTail: string;
}

let groupCounter = 0;

/**
 * Runs a command to completion and measures it. The command is started inside a fresh cpuacct
 * cgroup (when writable), so every process it starts is counted, and after it exits we wait up to
 * `settleMs` for the rest of the tree to go (and count what did not).
 */
export async function runMeasured(
  command: string,
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    settleMs?: number;
    /** Each piece of the child's stderr as it comes (long runs whose progress is shown). */
    onStderr?: (text: string) => void;
  } = {},
): Promise<RunResult> {
  const group = await createGroup();
  const machineBefore = await machineCpu();
  const started = performance.now();
  const wrapped = group
    ? spawn(
        "sh",
        ["-c", `echo $$ > "${group}/cgroup.procs" && exec "$@"`, "sh", command, ...args],
        {
          env: options.env ?? process.env,
          cwd: options.cwd,
          stdio: ["ignore", "ignore", "pipe"],
        },
      )
    : spawn(command, args, {
        env: options.env ?? process.env,
        cwd: options.cwd,
        stdio: ["ignore", "ignore", "pipe"],
      });
  let stderrTail = "";
  wrapped.stderr!.on("data", (chunk: Buffer) => {
    options.onStderr?.(chunk.toString());
    stderrTail = (stderrTail + chunk.toString()).slice(-6000);
  });
  const exitCode = await new Promise<number | null>((resolve) => {
    wrapped.once("exit", (code) => resolve(code));
    wrapped.once("error", () => resolve(null));
  });
  const wallSeconds = (performance.now() - started) / 1000;
  let leftovers = 0;
  if (group) {
    const deadline = Date.now() + (options.settleMs ?? 3000);
    for (;;) {
      leftovers = (await groupPids(group)).length;
      if (leftovers === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const machineAfter = await machineCpu();
  let tree: CpuTimes | undefined;
  if (group) {
    tree = await groupCpu(group);
    for (const pid of await groupPids(group)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await removeGroup(group);
  }
  return {
    wallSeconds,
    machine: {
      busy: machineAfter.busy - machineBefore.busy,
      system: machineAfter.system - machineBefore.system,
    },
    tree,
    leftovers,
    exitCode,
    stderrTail,
  };
}

async function createGroup(): Promise<string | undefined> {
  if (!existsSync(join(CPUACCT, "cpuacct.usage"))) return undefined;
  const dir = join(CPUACCT, `svc-bench-${process.pid}-${groupCounter++}`);
  try {
    await mkdir(dir);
    return dir;
  } catch {
    return undefined;
  }
}

async function groupPids(group: string): Promise<number[]> {
  const text = await readFile(join(group, "cgroup.procs"), "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

async function groupCpu(group: string): Promise<CpuTimes> {
  const usageNs = Number((await readFile(join(group, "cpuacct.usage"), "utf8")).trim());
  const stat = await readFile(join(group, "cpuacct.stat"), "utf8");
  const system = Number(/system (\d+)/.exec(stat)?.[1] ?? 0) / USER_HZ;
  return { busy: usageNs / 1e9, system };
}

async function removeGroup(group: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      await rmdir(group);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  // Could not remove (processes still exiting): leave an empty marker for the next run to retry.
  await writeFile(join(group, "notify_on_release"), "1").catch(() => undefined);
}

/** Busy and total jiffies of the whole machine since boot. */
export function cpuTimes(): { busy: number; total: number } {
  const numbers = procStatCpu();
  const idle = numbers[3]! + (numbers[4] ?? 0);
  const total = numbers.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Busy fraction of the whole machine between two cpuTimes() readings. */
export function busyBetween(
  before: ReturnType<typeof cpuTimes>,
  after: ReturnType<typeof cpuTimes>,
): number {
  return (after.busy - before.busy) / Math.max(1, after.total - before.total);
}
