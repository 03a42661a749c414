// Lines gathered into one write, and none lost when the process exits with lines pending.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { LineBatch } from "./batched-log";

it("hands many lines to the destination in one write, and the rest on close", () => {
  const writes: string[] = [];
  const batch = new LineBatch({ write: (text) => writes.push(text) });
  const line = `${"x".repeat(99)}\n`;
  for (let i = 0; i < 200; i++) batch.write(line);
  // 16 KiB gathered: one write of 164 lines, the other 36 still pending.
  expect(writes.map((text) => text.length)).toEqual([164 * 100]);
  batch.close();
  expect(writes.map((text) => text.length)).toEqual([164 * 100, 36 * 100]);
  // A line after close (a request that was still in flight) is not held back.
  batch.write(line);
  expect(writes.map((text) => text.length)).toEqual([164 * 100, 36 * 100, 100]);
});

it("writes pending lines out when the process exits before the batch is due", async () => {
  const module = fileURLToPath(new URL("./batched-log.ts", import.meta.url));
  const script = `
    import pino from "pino";
    import { batchedLogger } from ${JSON.stringify(module)};
    const destination = pino.destination({ dest: 1, sync: false });
    const { log } = batchedLogger({ level: "info" }, destination);
    log.info({ n: 1 }, "first");
    log.info({ n: 2 }, "second");
    process.exit(0);
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    { cwd: fileURLToPath(new URL("../../..", import.meta.url)) },
  );
  const lines = stdout
    .trim()
    .split("\n")
    .map((text) => JSON.parse(text) as { msg: string });
  expect(lines.map((entry) => entry.msg)).toEqual(["first", "second"]);
});
