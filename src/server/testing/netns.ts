// Test support: several "hosts" on this machine, as Linux network namespaces joined by one bridge,
// so a multi-host test cannot work by accident through 127.0.0.1 (each namespace has its own
// loopback) and every connection between hosts crosses a veth to the bridge. The test process
// (the root namespace) gets an address on the bridge too, as a client on the same network.
// Names carry the creating process's id (`svct-<pid36>-<host>`, links `svct<pid36>b|v<n>`), so a
// crashed run's leftovers are recognised and removed by the next run, and two runs never collide.
// Needs root and iproute2; netnsUnavailable() says why not.
import { spawnSync } from "node:child_process";
import { isAlive } from "../process-alive";

export interface Host {
  name: string;
  /** The namespace's name (for `ip netns exec`). */
  namespace: string;
  /** The host's address on the bridge. */
  address: string;
  /** Command prefix that runs a program on this host. */
  exec: string[];
}

export interface Network {
  /** The test process's own address on the bridge. */
  rootAddress: string;
  hosts: Record<string, Host>;
  /** Kills every process left in the namespaces and removes them and the bridge. */
  destroy(): void;
}

const PREFIX = "svct";

function ip(args: string[], options: { allowFailure?: boolean } = {}): string {
  const result = spawnSync("ip", args, { encoding: "utf8" });
  if (result.status !== 0 && !options.allowFailure) {
    throw new Error(
      `ip ${args.join(" ")} failed: ${result.error?.message ?? result.stderr.trim()}`,
    );
  }
  return result.stdout ?? "";
}

/** Why namespaces cannot be made here (not root, no iproute2), or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) {
    return "network namespaces need root (a non-root developer run; CI runs as root)";
  }
  const probe = `${PREFIX}-${runId()}-probe`;
  const added = spawnSync("ip", ["netns", "add", probe], { encoding: "utf8" });
  if (added.status !== 0) {
    return `\`ip netns add\` failed (${added.error?.message ?? added.stderr.trim()}); install iproute2`;
  }
  ip(["netns", "del", probe], { allowFailure: true });
  return undefined;
}

function runId(pid = process.pid): string {
  return pid.toString(36);
}

function killNamespaceProcesses(namespace: string): void {
  for (const pid of ip(["netns", "pids", namespace], { allowFailure: true }).split(/\s+/)) {
    if (/^\d+$/.test(pid)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // exited meanwhile
      }
    }
  }
}

/** Namespaces and links of runs whose process is gone (a crashed or killed test run). */
export function removeStaleNetworks(): void {
  const stale = (id: string) => {
    const pid = parseInt(id, 36);
    return pid !== process.pid && !isAlive(pid);
  };
  const namespaceName = new RegExp(`^${PREFIX}-([0-9a-z]+)-`);
  for (const line of ip(["netns", "list"], { allowFailure: true }).split("\n")) {
    const namespace = line.split(" ")[0] ?? "";
    const match = namespaceName.exec(namespace);
    if (match && stale(match[1]!)) {
      killNamespaceProcesses(namespace);
      ip(["netns", "del", namespace], { allowFailure: true });
    }
  }
  const linkName = new RegExp(`^\\d+: (${PREFIX}([0-9a-z]+)[bv]\\d*)[@:]`);
  for (const line of ip(["-o", "link", "show"], { allowFailure: true }).split("\n")) {
    const match = linkName.exec(line);
    if (match && stale(match[2]!)) ip(["link", "del", match[1]!], { allowFailure: true });
  }
}

/** A /24 under 10.77.0.0/16 that no address or route of this machine uses yet. */
function freeSubnet(): string {
  const used = ip(["-4", "-o", "addr", "show"]) + ip(["-4", "route", "show", "table", "all"]);
  for (let tries = 0; tries < 256; tries++) {
    const subnet = `10.77.${(process.pid + tries) % 256}`;
    if (!new RegExp(`(^|[^0-9])${subnet.replace(/\./g, "\\.")}\\.`, "m").test(used)) return subnet;
  }
  throw new Error("no free /24 under 10.77.0.0/16 for the test network");
}

/**
 * One namespace per host name, each with `lo` up and `eth0` on a bridge in the root namespace.
 * Addresses: the root namespace .1, hosts .10, .11, ... in the order given.
 */
export function createNetwork(hostNames: string[]): Network {
  removeStaleNetworks();
  const id = runId();
  const bridge = `${PREFIX}${id}b`;
  const subnet = freeSubnet();
  const hosts: Record<string, Host> = {};
  const destroy = () => {
    for (const host of Object.values(hosts)) {
      killNamespaceProcesses(host.namespace);
      ip(["netns", "del", host.namespace], { allowFailure: true });
    }
    // The veths went with their namespaces; the bridge is in the root namespace.
    ip(["link", "del", bridge], { allowFailure: true });
    process.removeListener("exit", destroy);
  };
  process.once("exit", destroy);
  try {
    ip(["link", "add", bridge, "type", "bridge"]);
    ip(["addr", "add", `${subnet}.1/24`, "dev", bridge]);
    ip(["link", "set", bridge, "up"]);
    for (const [index, name] of hostNames.entries()) {
      const namespace = `${PREFIX}-${id}-${name}`;
      const address = `${subnet}.${10 + index}`;
      const exec = ["ip", "netns", "exec", namespace];
      ip(["netns", "add", namespace]);
      hosts[name] = { name, namespace, address, exec };
      const outside = `${PREFIX}${id}v${index}`;
      ip(["link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", namespace]);
      ip(["link", "set", outside, "master", bridge]);
      ip(["link", "set", outside, "up"]);
      ip(["-n", namespace, "addr", "add", `${address}/24`, "dev", "eth0"]);
      ip(["-n", namespace, "link", "set", "eth0", "up"]);
      // A host's own loopback (the engine serves the project to its browser there).
      ip(["-n", namespace, "link", "set", "lo", "up"]);
    }
  } catch (error) {
    destroy();
    throw error;
  }
  return { rootAddress: `${subnet}.1`, hosts, destroy };
}
