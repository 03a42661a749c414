// How long the container tests' images take from an EMPTY podman store, as on a fresh CI machine
// (issue 36: CI under 35 minutes). Podman keeps layers in /var/lib/containers between runs on one
// machine, which hides the cold cost; this bench points podman at a new graph root in a temp dir
// (CONTAINERS_STORAGE_CONF), so the machine's own store and its cached layers stay untouched.
//
//   npx tsx bench/container-images.ts              the images alone (buildAllImages), then sizes
//   npx tsx bench/container-images.ts --suite      the whole `npm run test:containers` instead
//   npx tsx bench/container-images.ts --src DIR    DIR's Dockerfiles and podman.ts (a baseline
//                                                  checkout, e.g. `git worktree add DIR main`)
//   --keep DIR                                     keep the store in DIR (a later run with the
//                                                  same DIR measures the warm case)
//
// Prints wall time, CPU (the run's cgroup, and the whole machine from /proc/stat, which on a
// shared machine includes everyone's work) and the 1-minute load average sampled every 10 s.
// Each line of podman's output is echoed with the time since the start, to see each step's cost.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runMeasured } from "./cpu";

const REPO = resolve(import.meta.dirname, "..");

const { values } = parseArgs({
  options: {
    suite: { type: "boolean", default: false },
    src: { type: "string" },
    keep: { type: "string" },
  },
});
const src = resolve(values.src ?? REPO);

async function load1(): Promise<number> {
  return Number((await readFile("/proc/loadavg", "utf8")).split(" ")[0]);
}

const storeRoot = values.keep ? resolve(values.keep) : await mkdtemp(join(tmpdir(), "svc-store-"));
const warm = existsSync(join(storeRoot, "graph"));
await mkdir(storeRoot, { recursive: true });
const storageConf = join(storeRoot, "storage.conf");
await writeFile(
  storageConf,
  `[storage]\ndriver = "overlay"\ngraphroot = "${storeRoot}/graph"\nrunroot = "${storeRoot}/run"\n`,
);
const env = { ...process.env, CONTAINERS_STORAGE_CONF: storageConf, CI: "1" };
const tsx = join(REPO, "node_modules/.bin/tsx");
const podmanTs = join(src, "deploy/container/podman.ts");
const command = values.suite
  ? {
      file: join(REPO, "node_modules/.bin/vitest"),
      args: ["run", "-c", "vitest.containers.config.ts"],
    }
  : {
      file: tsx,
      args: [
        "-e",
        `import(${JSON.stringify(podmanTs)}).then(async (m) => {
           const seconds = await m.buildAllImages();
           console.error("bench: per image (s) " + JSON.stringify(seconds));
           for (const [name, tag] of Object.entries(m.IMAGES)) {
             console.error("bench: " + name + " " + (await m.unpackedSize(tag) / 1048576).toFixed(0) + " MB unpacked");
           }
         })`,
      ],
    };

const loads: number[] = [await load1()];
const sampler = setInterval(() => void load1().then((value) => loads.push(value)), 10_000);
const started = Date.now();
let partial = "";
console.error(`bench: store ${storeRoot}, sources ${src}, load ${loads[0]}`);
const result = await runMeasured(command.file, command.args, {
  env,
  cwd: src,
  settleMs: 10_000,
  onStderr: (text) => {
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    const at = ((Date.now() - started) / 1000).toFixed(0).padStart(5);
    for (const line of lines) process.stderr.write(`[${at} s] ${line}\n`);
  },
});
clearInterval(sampler);
loads.push(await load1());

const mean = loads.reduce((a, b) => a + b, 0) / loads.length;
console.log(
  [
    `${values.suite ? "containers suite" : "images"} from ${warm ? "the store in " + storeRoot : "an empty store"}: exit ${result.exitCode}`,
    `wall ${result.wallSeconds.toFixed(0)} s`,
    `cgroup CPU ${result.tree ? result.tree.busy.toFixed(0) + " core-s" : "n/a"}`,
    `machine CPU ${result.machine.busy.toFixed(0)} core-s`,
    `load (1 min) ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}, mean ${mean.toFixed(1)}`,
  ].join("; "),
);
if (result.exitCode !== 0) console.error(result.stderrTail);

if (!values.keep) {
  // The store's images, then its folder (nothing else is using it; the machine's store is not
  // named here).
  spawnSync("podman", ["rmi", "-a", "-f"], { env, stdio: "ignore" });
  spawnSync("sh", ["-c", `grep -o " ${storeRoot}/[^ ]*" /proc/mounts | xargs -r umount -l`]);
  await rm(storeRoot, { recursive: true, force: true });
}
process.exit(result.exitCode === 0 ? 0 : 1);
