// `svc cloud render DIR --batch rows.csv`: the rows are checked before anything is uploaded (a
// listening socket counts requests, so a refusal provably never reached the network), then the
// same table (its bad rows fixed or dropped) renders against the real service: one asset, one
// render per row, files named by --output-pattern, and running it again with the same key renders
// no row twice.
import { cp, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  queryServiceDatabase,
  startService,
  type ServiceProcess,
} from "../../server/testing/service-process";
import {
  runCli,
  runInProcess,
  serviceCounts,
  startRequestCounter,
  tempDir,
} from "../testing/cloud-service";

const REPO = resolve(import.meta.dirname, "../../..");
const LOWER_THIRD = join(REPO, "examples/lower-third");
const SPEAKERS = join(REPO, "e2e/data/lower-third-speakers.csv");

let counter: Awaited<ReturnType<typeof startRequestCounter>>;
let listenerUrl: string;
let work: string;

beforeAll(async () => {
  counter = await startRequestCounter();
  listenerUrl = counter.url;
  work = await tempDir("svc-batch-test-");
});

afterAll(async () => {
  await counter.close();
});

function offline(args: string[]) {
  return runInProcess(args, {
    HOME: work,
    SVC_CONFIG_DIR: undefined,
    SVC_ALIAS_API_KEY: undefined,
    SVC_API_URL: listenerUrl,
    SVC_API_KEY: "svc_key_notused123",
  });
}

describe("svc cloud render --batch refuses bad rows before any upload", () => {
  it("names each bad row by its number and what is wrong with it", async () => {
    const result = await offline(["cloud", "render", LOWER_THIRD, "--batch", SPEAKERS]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("2 rows do not match the composition, so nothing was uploaded");
    expect(result.stderr).toContain("row 4: size: 400 is above max 96 (out-of-range)");
    expect(result.stderr).toMatch(/row 9: accent: expected a hex color .* got string "teal"/);
    expect(result.stderr).toContain("hint: Fix those rows in");
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(counter.requests()).toBe(0);
  });

  it("refuses a pattern that names a folder, an unknown column with strict variables, and a bad table", async () => {
    const good = join(work, "good.csv");
    await writeFile(good, "title,titel\nAda,x\n");
    const folder = await offline([
      "cloud",
      "render",
      LOWER_THIRD,
      "--batch",
      good,
      "--output-pattern",
      "../{title}",
    ]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain("--output-pattern: The pattern names a file, not a folder");
    const strict = await offline([
      "cloud",
      "render",
      LOWER_THIRD,
      "--batch",
      good,
      "--strict-variables",
    ]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('"titel" is not a variable of this composition');
    const broken = join(work, "broken.csv");
    await writeFile(broken, 'title\n"never closed\n');
    const table = await offline(["cloud", "render", LOWER_THIRD, "--batch", broken, "--json"]);
    expect(table.code).toBe(2);
    expect(JSON.parse(table.stdout).error.message).toMatch(/unclosed quote/);
    const alone = await offline(["cloud", "render", LOWER_THIRD, "--concurrency", "2"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--concurrency only applies with --batch");
    expect(counter.requests()).toBe(0);
  });

  it("lists each row's file in a dry run", async () => {
    const rows = join(work, "dry.csv");
    await writeFile(rows, "title\nGrace Hopper\nAlan Turing\n");
    const result = await offline(["cloud", "render", LOWER_THIRD, "--batch", rows, "--dry-run"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("row 1  Grace Hopper-1.mp4\nrow 2  Alan Turing-2.mp4\n");
    expect(counter.requests()).toBe(0);
  });
});

describe("svc cloud render --batch against the real service", () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startService({ dataDir: join(work, "data"), jobs: 2 });
  });
  afterAll(async () => {
    await service?.kill();
  });

  it("renders every row against one upload, names the files by the pattern, and renders no row twice when run again", async () => {
    // The acceptance table with its two bad rows set right: row 4 fixed, row 9 dropped.
    const lines = (await readFile(SPEAKERS, "utf8")).trimEnd().split("\n");
    lines[4] = lines[4]!.replace(",400,", ",72,");
    lines.splice(9, 1);
    const rows = join(work, "speakers.csv");
    await writeFile(rows, `${lines.join("\n")}\n`);
    const env = { HOME: join(work, "home"), SVC_API_URL: service.url, SVC_API_KEY: service.apiKey };
    const args = [
      "cloud",
      "render",
      LOWER_THIRD,
      "--batch",
      rows,
      "--output-pattern",
      "{title}-{row}",
      "--concurrency",
      "3",
      "-o",
      "out",
      "--fps",
      "1",
      "--quality",
      "draft",
      "--poll-interval",
      "1",
      "--idempotency-key",
      "batch-test-1",
      "--json",
    ];
    const first = await runCli(args, { cwd: work, env });
    expect(first.code, first.stderr).toBe(0);
    const records = first.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const summary = records.pop() as { summary: Record<string, unknown> };
    expect(summary.summary).toMatchObject({ rows: 11, completed: 11, failed: [] });
    expect(records.map((r) => r.row).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 11 }, (_, i) => i + 1),
    );
    const expected = lines.slice(1).map((line, index) => `${line.split(",")[0]}-${index + 1}.mp4`);
    expect((await readdir(join(work, "out"))).sort()).toEqual([...expected].sort());
    for (const record of records)
      expect(record).toMatchObject({
        status: "completed",
        output: expect.stringMatching(/\.mp4$/),
      });
    expect(await serviceCounts(service.dataDir)).toMatchObject({ assets: 1, renders: 11 });

    // The same command again: every key replays, so nothing new is uploaded or rendered.
    const again = await runCli(
      args.filter((a) => a !== "--json"),
      { cwd: work, env },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim().split("\n")).toHaveLength(11);
    expect(again.stdout).toMatch(/^row \d+ +completed +rndr_\w+ -> .*\.mp4 /m);
    expect(again.stderr).toContain("11 of 11 rows rendered");
    expect(await serviceCounts(service.dataDir)).toMatchObject({ assets: 1, renders: 11 });
  }, 600_000);

  it("gives each row the caption file and look its captions and caption_style columns name", async () => {
    const project = join(work, "with-captions");
    await cp(LOWER_THIRD, project, { recursive: true });
    await mkdir(join(project, "subs"), { recursive: true });
    await writeFile(join(project, "subs", "ada.srt"), "1\n00:00:00,000 --> 00:00:01,000\nAda\n");
    await writeFile(join(project, "subs", "all.srt"), "1\n00:00:00,000 --> 00:00:01,000\nAll\n");
    const rows = join(work, "captions.csv");
    await writeFile(
      rows,
      "title,captions,caption_style\nAda Lovelace,subs/ada.srt,karaoke\nGrace Hopper,,\nAlan Turing,,Social\n",
    );
    const env = { HOME: join(work, "home"), SVC_API_URL: service.url, SVC_API_KEY: service.apiKey };
    const result = await runCli(
      [
        ...["cloud", "render", project, "--batch", rows, "--caption-style", "band"],
        ...["--captions", join(project, "subs", "all.srt"), "--no-wait", "--fps", "1"],
        ...["--quality", "draft", "--idempotency-key", "batch-captions-1"],
      ],
      { cwd: work, env },
    );
    expect(result.code, result.stderr).toBe(0);
    const stored = await queryServiceDatabase<{ captions_json: string }>(
      service.dataDir,
      "select captions_json from renders where captions_json is not null",
    );
    // Row 1 by its own columns, rows 2 and 3 (empty captions cells) by the batch's --captions,
    // row 3 in its own look (named as the app names it).
    expect(stored).toHaveLength(3);
    const looks = stored.map((render) => {
      const captions = JSON.parse(render.captions_json) as {
        style: string;
        cues: Array<{ text: string }>;
      };
      return `${captions.style} ${captions.cues.map((cue) => cue.text).join()}`;
    });
    expect(looks.sort()).toEqual(["band All", "karaoke Ada", "social All"]);
  }, 300_000);
});
