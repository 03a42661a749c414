// Where a render's browser runs, and what it can reach. A composition is untrusted code (SPEC.md
// section 12), so a browser whose page may not use the network is closed off by construction, not
// by a filter that knows some protocols:
// - On Linux the browser starts inside a network namespace of its own (`unshare --user --net`):
//   no interface is up in it, not even loopback, so WebSocket, WebRTC/UDP, QUIC, DNS and any
//   protocol a future Chromium adds reach nothing. Every request the page makes is paused by the
//   DevTools Fetch domain (network.ts) and answered by this process, which reads the project's
//   files (and the allowed origins) itself: the browser needs no network at all.
// - Everywhere, the same browser gets switches that close what they can (a refusing proxy for
//   every scheme and loopback too, no name resolution, WebRTC without UDP, no QUIC); on macOS and
//   Windows, or a Linux kernel without user namespaces, these switches are the whole fence
//   (docs/security.md lists what they leave open).
// - When this process is root (CI, a container), the browser runs as an unprivileged user
//   (`nobody`, or SVC_BROWSER_UID/SVC_BROWSER_GID) with a profile folder it owns, so a browser
//   bug does not run code as root next to svc.db and the signing secret.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

/** How one browser is started: the command in front of it, and the user it runs as. */
export interface Confinement {
  /** "namespace": its own empty network namespace; "switches": browser switches only; "none". */
  network: "namespace" | "switches" | "none";
  /** Command and arguments put in front of the browser's (e.g. unshare). */
  prefix: string[];
  /** The user and group the browser runs as, when it is not this process's. */
  uid?: number;
  gid?: number;
  /** Extra browser switches (the closed-network ones). */
  args: string[];
  /** Why it is so, in a sentence `svc doctor` and the service's start-up log show. */
  reason: string;
  /**
   * Chromium's own sandbox is on (renderers in their own namespaces under seccomp): where the
   * browser runs as an unprivileged user in a user namespace svc could make. Then the browser runs
   * in several processes; without it, in one (faster to start, --single-process).
   */
  sandbox: boolean;
  /** Why the sandbox is on or off, in a sentence. */
  sandboxReason: string;
}

/** Switches a sandboxed browser must not get: they turn the sandbox off or need it off. */
export const UNSANDBOXED_ARGS = ["--no-sandbox", "--single-process", "--no-zygote"];

/**
 * Switches that keep a browser off the network by themselves: every connection goes to a proxy
 * that does not exist (loopback included: `<-loopback>` removes Chromium's implicit bypass), no
 * host name resolves, WebRTC may not send UDP outside a proxy, and QUIC is off. Requests the
 * engine answers (network.ts fulfils them) never reach these.
 */
export const CLOSED_NETWORK_ARGS = [
  "--proxy-server=http://0.0.0.0:9",
  "--proxy-bypass-list=<-loopback>",
  "--host-resolver-rules=MAP * ~NOTFOUND",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--disable-quic",
  "--dns-prefetch-disable",
];

/** The unprivileged user a root process starts browsers as (Debian's and most systems' nobody). */
const NOBODY = 65534;

function browserUser(env: NodeJS.ProcessEnv): { uid: number; gid: number } | undefined {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return undefined;
  const uid = Number(env.SVC_BROWSER_UID?.trim() || NOBODY);
  const gid = Number(env.SVC_BROWSER_GID?.trim() || NOBODY);
  return Number.isInteger(uid) && Number.isInteger(gid) && uid > 0 ? { uid, gid } : undefined;
}

const UNSHARE_CANDIDATES = ["/usr/bin/unshare", "/bin/unshare", "/usr/sbin/unshare"];

const probed = new Map<string, Confinement>();

/**
 * How to start `executablePath` for a page whose network is closed (`closedNetwork`) or open:
 * probed once per browser and user (a namespace that cannot be made is tried no more).
 */
export function confinementFor(
  executablePath: string,
  closedNetwork: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Confinement {
  const key = JSON.stringify([
    executablePath,
    closedNetwork,
    env.SVC_BROWSER_NAMESPACE,
    env.SVC_BROWSER_SANDBOX,
    env.SVC_BROWSER_UID,
    env.SVC_BROWSER_GID,
  ]);
  let found = probed.get(key);
  if (!found) probed.set(key, (found = probe(executablePath, closedNetwork, env)));
  return found;
}

function probe(
  executablePath: string,
  closedNetwork: boolean,
  env: NodeJS.ProcessEnv,
): Confinement {
  const user = browserUser(env);
  const owner = user ? { uid: user.uid, gid: user.gid } : {};
  if (!closedNetwork) {
    return {
      network: "none",
      prefix: [],
      args: [],
      reason: "the page may use the network (a local render of your own project)",
      sandbox: false,
      sandboxReason:
        "a local render of your own project runs the browser as you, in one process (the fastest start)",
    };
  }
  if (env.SVC_BROWSER_NAMESPACE?.trim() === "0") {
    return {
      network: "switches",
      prefix: [],
      ...owner,
      args: CLOSED_NETWORK_ARGS,
      reason: "SVC_BROWSER_NAMESPACE=0: the browser's own switches keep it off the network",
      ...sandboxOff("SVC_BROWSER_NAMESPACE=0 turns svc's namespaces off"),
    };
  }
  const unshare = process.platform === "linux" ? UNSHARE_CANDIDATES.find(existsSync) : undefined;
  if (unshare) {
    const ids = user ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    const prefix = [
      unshare,
      "--user",
      `--map-user=${ids.uid}`,
      `--map-group=${ids.gid}`,
      "--net",
      "--",
    ];
    // `test -x` as the browser's user also proves it may reach the executable.
    const check = spawnSync(prefix[0]!, [...prefix.slice(1), "test", "-x", executablePath], {
      ...owner,
      stdio: "ignore",
      timeout: 10_000,
    });
    if (check.status === 0) {
      return {
        network: "namespace",
        prefix,
        ...owner,
        args: CLOSED_NETWORK_ARGS,
        reason:
          "the browser runs in a network namespace of its own with no interface up, so it reaches nothing; svc answers its requests for the project's files (SVC_BROWSER_NAMESPACE=0: the browser's switches only)",
        // On unless turned off: the page's compositor then runs in a sandboxed process of its
        // own, which the raster reset of every segment reaches through the page itself
        // (CapturePage.forgetRasterHistory), so chunks still draw what whole renders draw.
        ...(env.SVC_BROWSER_SANDBOX?.trim() === "0"
          ? sandboxOff(
              "SVC_BROWSER_SANDBOX=0 turns it off; the page is still closed off from every network" +
                (user ? `, and the browser runs as uid ${user.uid}, not root` : ""),
            )
          : !nestedNamespaces(prefix, owner)
            ? sandboxOff(
                "svc can make the browser's namespace, but Chromium cannot make its own namespaces inside it for each page and lock them with chroot (in a container: the SYS_CHROOT capability is missing, see docs/deploy.md); the page is still closed off from every network" +
                  (user ? `, and the browser runs as uid ${user.uid}, not root` : ""),
              )
            : {
                sandbox: true,
                sandboxReason: user
                  ? `Chromium's sandbox is on: each page runs in a locked-down process of its own (seccomp, its own namespaces), so a page that exploits a browser bug is still shut in that process; svc runs as root, so the browser runs as uid ${user.uid} (SVC_BROWSER_SANDBOX=0 turns the sandbox off)`
                  : "Chromium's sandbox is on: each page runs in a locked-down process of its own (seccomp, its own namespaces), so a page that exploits a browser bug is still shut in that process (SVC_BROWSER_SANDBOX=0 turns the sandbox off)",
              }),
      };
    }
    return {
      network: "switches",
      prefix: [],
      ...owner,
      args: CLOSED_NETWORK_ARGS,
      reason: `this kernel did not let svc make a user and network namespace (unshare exit ${check.status ?? check.signal ?? check.error?.message}); the browser's own switches keep it off the network (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces>0 closes it by construction)`,
      ...sandboxOff(
        "Chromium's sandbox needs user namespaces, which this kernel does not give svc (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces>0 turns it on)",
      ),
    };
  }
  return {
    network: "switches",
    prefix: [],
    ...owner,
    args: CLOSED_NETWORK_ARGS,
    reason:
      process.platform === "linux"
        ? "unshare (util-linux) is not installed; the browser's own switches keep it off the network"
        : "network namespaces are a Linux feature; on this system the browser's own switches keep it off the network",
    ...sandboxOff(
      process.platform === "linux"
        ? "without unshare svc cannot give the browser the user namespace its sandbox needs"
        : "svc starts the browser without its sandbox on this system",
    ),
  };
}

/**
 * Chromium's sandbox makes a user, PID and network namespace for each page's process, inside the
 * one svc made, and chroots into an empty folder there: some kernels and container runtimes
 * refuse nested namespaces, and a container whose capabilities are all dropped refuses the chroot
 * (an empty bounding set holds in the nested namespace too). A browser started with the sandbox
 * there would not start at all ("Check failed: sys_chroot"), so both are tried first with unshare.
 */
function nestedNamespaces(prefix: string[], owner: { uid?: number; gid?: number }): boolean {
  const nested = [prefix[0]!, "--user", "--pid", "--net", "--fork", "--root=/", "--", "true"];
  const check = spawnSync(prefix[0]!, [...prefix.slice(1), ...nested], {
    ...owner,
    stdio: "ignore",
    timeout: 10_000,
  });
  return check.status === 0;
}

function sandboxOff(why: string): { sandbox: false; sandboxReason: string } {
  return { sandbox: false, sandboxReason: `Chromium's sandbox is off: ${why}` };
}
