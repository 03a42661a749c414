// The attacker's probes of issue 41, kept: a composition that tries every way out it can (fetch,
// img, iframe, EventSource, sendBeacon, WebSocket in the page and in a worker, a worker's fetch,
// WebRTC through STUN and TURN, a DNS prefetch) against listeners that count every TCP connection
// and UDP packet, on loopback and on another host (a network namespace, where this machine lets
// the test make one). With the network closed, nothing arrives, the render completes and each
// attempt is named in its warnings; the same page with the listener's origin allowed reaches it,
// and with the network open its WebRTC and WebSocket packets do arrive (so the probes are real).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNetwork, netnsUnavailable, type Network } from "../../server/testing/netns";
import { confinementFor } from "./confinement";
import { resolveChromium } from "./browser";
import { renderComposition } from "../render";
import { decodeFrame, pixelAt } from "../testing/probe";
import type { NetworkAccess } from "./network";

/** A place that counts what reaches it: TCP connections (HTTP, WebSocket) and UDP packets. */
interface Listener {
  host: string;
  tcpPort: number;
  udpPort: number;
  hits(): { tcp: number; udp: number };
  reset(): void;
  close(): Promise<void>;
}

async function loopbackListener(): Promise<Listener> {
  let tcp = 0;
  let udp = 0;
  const server: Server = createServer((req, res) => {
    res.writeHead(200, { "access-control-allow-origin": "*", "content-type": "text/plain" });
    res.end("reached");
  });
  server.on("connection", () => tcp++);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const socket: Socket = createSocket("udp4");
  socket.on("message", () => udp++);
  await new Promise<void>((done) => socket.bind(0, "127.0.0.1", done));
  return {
    host: "127.0.0.1",
    tcpPort: (server.address() as AddressInfo).port,
    udpPort: socket.address().port,
    hits: () => ({ tcp, udp }),
    reset: () => void (tcp = udp = 0),
    close: async () => {
      socket.close();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** The same listener as a process on another host (`exec` runs it there), reporting each hit. */
const REMOTE_LISTENER = `
import { createServer } from "node:net";
import { createSocket } from "node:dgram";
const host = process.argv[1];
const tcp = createServer((socket) => { console.log("tcp"); socket.on("error", () => {}); socket.end("HTTP/1.1 200 OK\\r\\naccess-control-allow-origin: *\\r\\ncontent-length: 7\\r\\n\\r\\nreached"); });
tcp.listen(0, host, () => {
  const udp = createSocket("udp4");
  udp.on("message", () => console.log("udp"));
  udp.bind(0, host, () => console.log("ready " + tcp.address().port + " " + udp.address().port));
});
`;

async function remoteListener(exec: string[], host: string): Promise<Listener> {
  const child: ChildProcess = spawn(
    exec[0]!,
    [...exec.slice(1), process.execPath, "--input-type=module", "-e", REMOTE_LISTENER, host],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let tcp = 0;
  let udp = 0;
  const lines = createInterface({ input: child.stdout! });
  const ports = await new Promise<[number, number]>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the listener on ${host} exited (${code})`)));
    lines.on("line", (line) => {
      if (line === "tcp") tcp++;
      else if (line === "udp") udp++;
      const ready = /^ready (\d+) (\d+)$/.exec(line);
      if (ready) resolve([Number(ready[1]), Number(ready[2])]);
    });
  });
  return {
    host,
    tcpPort: ports[0],
    udpPort: ports[1],
    hits: () => ({ tcp, udp }),
    reset: () => void (tcp = udp = 0),
    close: async () => {
      child.kill();
    },
  };
}

/** Every attempt the page makes at one listener, by the name its warning carries. */
function attempts(listener: Listener): { script: string; worker: string; named: string[] } {
  const http = `http://${listener.host}:${listener.tcpPort}`;
  const ws = `ws://${listener.host}:${listener.tcpPort}`;
  const stun = `stun:${listener.host}:${listener.udpPort}`;
  const turn = `turn:${listener.host}:${listener.udpPort}?transport=udp`;
  const script = `{
    fetch("${http}/fetch").catch(() => {});
    document.body.appendChild(Object.assign(new Image(), { src: "${http}/img.png" }));
    document.body.appendChild(Object.assign(document.createElement("iframe"), { src: "${http}/iframe" }));
    new EventSource("${http}/events");
    navigator.sendBeacon("${http}/beacon", "x");
    try { new WebSocket("${ws}/page"); } catch {}
    const peer = new RTCPeerConnection({ iceServers: [{ urls: "${stun}" }, { urls: "${turn}", username: "u", credential: "c" }] });
    peer.createDataChannel("x");
    peer.createOffer().then((offer) => peer.setLocalDescription(offer)).catch(() => {});
  }
  `;
  const worker = `{
    fetch("${http}/worker-fetch").catch(() => {});
    try { new WebSocket("${ws}/worker"); } catch {}
  }
  `;
  return {
    script,
    worker,
    named: [
      `${http}/fetch`,
      `${http}/img.png`,
      `${http}/iframe`,
      `${http}/events`,
      `${http}/beacon`,
      `${ws}/page`,
      `${http}/worker-fetch`,
      `${ws}/worker`,
      stun,
      turn,
    ],
  };
}

const PREFETCH_ORIGIN = "http://dns-prefetch.svc-probe.invalid";

async function writeProbeProject(dir: string, listeners: Listener[]): Promise<void> {
  const each = listeners.map(attempts);
  await writeFile(join(dir, "worker.js"), each.map((one) => one.worker).join("\n"));
  await writeFile(
    join(dir, "index.html"),
    `<!doctype html><html><head><meta charset="utf-8">
<link rel="dns-prefetch" href="${PREFETCH_ORIGIN.replace("http:", "")}">
<style>html,body{margin:0;background:#124}</style></head>
<body><div id="stage" data-composition-id="main" data-width="320" data-height="180" data-duration="1"></div>
<script>
${each.map((one) => one.script).join("\n")}
new Worker("worker.js");
window.__timelines = window.__timelines || {};
</script></body></html>`,
  );
}

let scratch: string;
let network: Network | undefined;
const listeners: Listener[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-closed-network-"));
  listeners.push(await loopbackListener());
  // Another host: where namespaces can be made (root; CI runs as root).
  if (!netnsUnavailable()) {
    network = createNetwork(["probe"]);
    const host = network.hosts.probe!;
    listeners.push(await remoteListener(host.exec, host.address));
  }
  await writeProbeProject(scratch, listeners);
});

afterAll(async () => {
  await Promise.all(listeners.map((listener) => listener.close()));
  network?.destroy();
  await rm(scratch, { recursive: true, force: true });
});

async function renderProbe(allowNetwork: NetworkAccess, name: string): Promise<string[]> {
  for (const listener of listeners) listener.reset();
  const result = await renderComposition({
    projectDir: scratch,
    output: join(scratch, `${name}.mp4`),
    fps: 5,
    quality: "draft",
    workers: 1,
    allowNetwork,
    thumbnail: false,
  });
  return result.warnings;
}

// The fence is on by default (confinement.ts); a machine that turned it down would not test it.
const fenceBefore = process.env.SVC_BROWSER_NAMESPACE;
beforeAll(() => {
  delete process.env.SVC_BROWSER_NAMESPACE;
});
afterAll(() => {
  if (fenceBefore !== undefined) process.env.SVC_BROWSER_NAMESPACE = fenceBefore;
});

describe("a composition whose network is closed", () => {
  it("reaches no listener by any protocol, renders, and names every attempt", async () => {
    const warnings = await renderProbe(false, "closed");
    for (const listener of listeners) {
      expect({ host: listener.host, ...listener.hits() }).toEqual({
        host: listener.host,
        tcp: 0,
        udp: 0,
      });
      for (const url of attempts(listener).named) {
        expect(warnings.some((warning) => warning.includes(url))).toBe(true);
      }
    }
    expect(warnings.some((warning) => warning.includes(PREFETCH_ORIGIN))).toBe(true);
    expect(warnings.join("\n")).toMatch(/WebSocket to ws:.*WebRTC connection through stun:/s);
  });

  it("reaches an allowed origin, and only that one", async () => {
    const [loopback, ...others] = listeners;
    await renderProbe({ origins: [`http://${loopback!.host}:${loopback!.tcpPort}`] }, "allowed");
    expect(loopback!.hits().tcp).toBeGreaterThan(0);
    expect(loopback!.hits().udp).toBe(0);
    for (const other of others) expect(other.hits()).toEqual({ tcp: 0, udp: 0 });
  });

  it("runs in a namespace of its own where this machine allows one", async () => {
    const browser = await resolveChromium();
    // This machine (and CI) allows user namespaces: the fence is the namespace, not the switches.
    expect(confinementFor(browser.executablePath, true).network).toBe("namespace");
  });
});

describe("the same page with the network open (a local render of one's own project)", () => {
  it("does reach the listeners, so the probes above are real", async () => {
    await renderProbe(true, "open");
    for (const listener of listeners) {
      expect(listener.hits().tcp).toBeGreaterThan(0);
      expect(listener.hits().udp).toBeGreaterThan(0);
    }
  });
});

describe("a closed page and the files of the machine it renders on", () => {
  it("cannot read a file outside its project, even with switches that would allow it", async () => {
    const secretDir = join(scratch, "secret");
    await mkdir(secretDir);
    const secret = join(secretDir, "signing-secret.txt");
    await writeFile(secret, "not for pages");
    await chmod(secretDir, 0o700);
    expect(await readFile(secret, "utf8")).toBe("not for pages"); // this process can
    const project = join(scratch, "reader");
    await mkdir(project);
    // Synchronous reads, so the answer is in the first frame: green if anything was read.
    await writeFile(
      join(project, "index.html"),
      `<!doctype html><html><head><style>html,body{margin:0;background:#f00}</style></head>
<body><div id="stage" data-composition-id="main" data-width="320" data-height="180" data-duration="0.2"></div>
<script>
let read = "";
for (const url of ["file://${secret}", "file:///etc/hostname"]) {
  try { const x = new XMLHttpRequest(); x.open("GET", url, false); x.send(); read += x.responseText; } catch {}
}
if (read) document.body.style.background = "#0f0";
</script></body></html>`,
    );
    const output = join(scratch, "reader.mp4");
    await renderComposition(
      { projectDir: project, output, fps: 5, workers: 1, allowNetwork: false, thumbnail: false },
      { extraArgs: ["--allow-file-access-from-files", "--disable-web-security"] },
    );
    const [red, green] = pixelAt(await decodeFrame(output, 0), 160, 90);
    // With Chromium's sandbox on, as service renders have it by default (doctor.test.ts).
    const { executablePath } = await resolveChromium();
    expect(confinementFor(executablePath, true).sandbox).toBe(true);
    expect(red).toBeGreaterThan(200);
    expect(green).toBeLessThan(60);
  });

  // A page served over http gets no file:// loader whatever the switches (the same page in an
  // open browser, run as svc's own user, read nothing either: measured), so what keeps a
  // browser bug from svc's private files is the user the fenced browser runs as.
  it("runs as a user that cannot open svc's private files when svc is root", async () => {
    const secretDir = join(scratch, "private");
    await mkdir(secretDir);
    const secret = join(secretDir, "svc.db");
    await writeFile(secret, "not for pages");
    await chmod(secretDir, 0o700);
    const { executablePath } = await resolveChromium();
    const fence = confinementFor(executablePath, true);
    const asBrowser = spawnSync(
      fence.prefix[0] ?? "cat",
      [...fence.prefix.slice(1), ...(fence.prefix.length > 0 ? ["cat"] : []), secret],
      fence.uid !== undefined ? { uid: fence.uid, gid: fence.gid } : {},
    );
    const asSvc = spawnSync("cat", [secret]); // the control: the file is there to read
    expect(asSvc.stdout.toString()).toBe("not for pages");
    const root = process.getuid?.() === 0;
    expect(asBrowser.stdout.toString()).toBe(root ? "" : "not for pages");
    if (root) expect(asBrowser.stderr.toString()).toMatch(/Permission denied/);
  });
});
