// Property-based fuzzing (fast-check) of what the service takes from strangers: request bodies,
// query strings and paths of the /v3 API against the real service, and zip archives against the
// inspector and the extractor. Properties: no 5xx, no hang (every request has a deadline), every
// refusal carries a code, and nothing is written outside the destination. Bounded so it fits in
// `npm test`; `npm run fuzz` runs the same properties for longer (SVC_FUZZ_RUNS, SVC_FUZZ_SECONDS).
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ERRORS } from "../shared/api";
import { startService, type ServiceProcess } from "./testing/service-process";
import { buildZip } from "./testing/zip-builder";
import { ArchiveError, extractZip, inspectZip } from "./assets/zip-inspect";

const RUNS = Number(process.env.SVC_FUZZ_RUNS ?? 60);
/** Each property stops after this long, whatever RUNS says. */
const PROPERTY_MS = Number(process.env.SVC_FUZZ_SECONDS ?? 8) * 1000;
const settings = {
  numRuns: RUNS,
  interruptAfterTimeLimit: PROPERTY_MS,
  markInterruptAsFailure: false,
};

let svc: ServiceProcess;
let scratch: string;
/** Inputs tried per property, printed at the end (the campaign's figures). */
const tried = new Map<string, number>();
const count = (property: string) => tried.set(property, (tried.get(property) ?? 0) + 1);
const started = Date.now();

beforeAll(async () => {
  svc = await startService({ jobs: 0, env: { SVC_SERVER_RATE_LIMIT_PER_MINUTE: "0" } });
  scratch = await mkdtemp(join(tmpdir(), "svc-fuzz-"));
});

afterAll(async () => {
  const seconds = Math.round((Date.now() - started) / 1000);
  console.warn(`fuzz: ${JSON.stringify(Object.fromEntries(tried))} inputs in ${seconds} s`);
  await svc?.kill();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const jsonValue = fc.jsonValue({ maxDepth: 4 });

/** Bodies shaped like the real ones with some fields replaced by anything. */
const renderBody = fc.record(
  {
    project: fc.oneof(
      jsonValue,
      fc.record({ type: fc.constantFrom("asset_id", "url", "dir"), asset_id: fc.string() }),
    ),
    fps: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
    quality: fc.oneof(fc.constantFrom("draft", "standard", "high"), fc.string()),
    format: fc.oneof(fc.constantFrom("mp4", "webm", "mov"), jsonValue),
    resolution: fc.oneof(fc.constantFrom("1080p", "4k"), jsonValue),
    variables: jsonValue,
    callback_url: fc.oneof(fc.webUrl(), fc.string()),
    extra: jsonValue,
  },
  { requiredKeys: [] },
);

const assetBody = fc.record(
  {
    filename: fc.oneof(fc.string(), jsonValue),
    content_type: fc.oneof(fc.constant("application/zip"), fc.string()),
    size_bytes: fc.oneof(fc.integer(), fc.double(), fc.string()),
    checksum_sha256: fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string(), fc.constant(null)),
  },
  { requiredKeys: [] },
);

async function send(method: string, path: string, body?: string, contentType?: string) {
  const response = await fetch(`${svc.url}${path}`, {
    method,
    headers: {
      "x-api-key": svc.apiKey,
      ...(contentType ? { "content-type": contentType } : {}),
    },
    ...(body !== undefined ? { body } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { status: response.status, text };
}

/** No 5xx, and a refusal is `{error: {code}}` with a code of the service's table. */
function expectHandled(answer: { status: number; text: string }, what: string): void {
  expect(answer.status, what).toBeLessThan(500);
  if (answer.status >= 400) {
    const body = JSON.parse(answer.text) as { error?: { code?: string } };
    expect(Object.keys(API_ERRORS), what).toContain(body.error?.code);
  }
}

describe("fuzzing the request surface", () => {
  it("answers any render or asset body with 2xx or a coded refusal, never 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          renderBody.map((body) => ["/v3/svc/renders", JSON.stringify(body)] as const),
          assetBody.map((body) => ["/v3/assets", JSON.stringify(body)] as const),
          fc.string().map((text) => ["/v3/svc/renders", text] as const),
        ),
        async ([path, body]) => {
          count("bodies");
          expectHandled(await send("POST", path, body, "application/json"), body);
        },
      ),
      settings,
    );
  });

  it("answers any path, query and method under /v3 with a coded answer, never 5xx", async () => {
    const segment = fc.oneof(
      fc.constantFrom("assets", "svc", "renders", "users", "me", "complete", "..", "%2e%2e", ""),
      fc.webSegment(),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "DELETE", "PUT", "PATCH"),
        fc.array(segment, { maxLength: 5 }),
        fc.webQueryParameters(),
        async (method, segments, query) => {
          count("paths");
          const path = `/v3/${segments.join("/")}${query ? `?${query}` : ""}`;
          expectHandled(
            await send(method, path, undefined, "application/json"),
            `${method} ${path}`,
          );
        },
      ),
      settings,
    );
  });
});

describe("fuzzing the archive inspector", () => {
  const entryName = fc.oneof(
    fc.string({ minLength: 1 }),
    fc.constantFrom(
      "../escape.txt",
      "/abs.txt",
      "a/../../b",
      "C:\\x.txt",
      "a\\..\\..\\b",
      "ok/x.html",
    ),
  );
  const archive = fc.oneof(
    fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes)),
    fc
      .array(
        fc.record({
          name: entryName,
          data: fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
          deflate: fc.boolean(),
          mode: fc.constantFrom(0o100644, 0o120777, 0o040755),
        }),
        { minLength: 1, maxLength: 6 },
      )
      .chain((entries) =>
        fc.tuple(fc.constant(buildZip(entries)), fc.array(fc.nat(), { maxLength: 4 }), fc.nat(255)),
      )
      .map(([zip, positions, value]) => {
        const mutated = Buffer.from(zip);
        for (const position of positions) mutated[position % mutated.length] = value;
        return mutated;
      }),
  );

  it("inspects and extracts any bytes to an answer or an ArchiveError, writing only inside the destination", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(archive, async (bytes) => {
        count("archives");
        const case_ = join(scratch, `case-${n++}`);
        const file = `${case_}.zip`;
        const dest = join(case_, "out");
        await writeFile(file, bytes);
        for (const step of [() => inspectZip(file), () => extractZip(file, dest)]) {
          try {
            await step();
          } catch (error) {
            expect(error, String(error)).toBeInstanceOf(ArchiveError);
          }
        }
        // Nothing may land beside the destination (or anywhere else in the scratch folder).
        const everything = await readdir(scratch, { recursive: true });
        for (const path of everything) {
          const inside = relative(scratch, join(scratch, path));
          expect(inside.startsWith("case-"), inside).toBe(true);
        }
        await rm(case_, { recursive: true, force: true });
        await rm(file, { force: true });
      }),
      settings,
    );
  });
});
