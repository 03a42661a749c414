// `svc doctor [--json]`: is this computer ready to render? Prints the engine's doctor report
// (browser, FFmpeg and its encoders, ffprobe) and exits 1 when something needed is missing.
import type { Command } from "commander";
import { runDoctor } from "../engine/doctor";
import type { DoctorReport } from "../engine/doctor";
import type { CliIo } from "./io";

export function registerDoctorCommand(program: Command, io: CliIo): void {
  program
    .command("doctor")
    .description("check the browser and FFmpeg that renders need, and what to install if missing")
    .option("--json", "print the report as JSON on stdout")
    .action(async (options: { json?: boolean }) => {
      const report = await runDoctor();
      io.stdout.write(
        options.json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctorReport(report),
      );
      io.exitCode = report.ok ? 0 : 1;
    });
}

const LABEL_WIDTH = 13;

export function formatDoctorReport(report: DoctorReport): string {
  const lines: string[] = [];
  const row = (ok: boolean, label: string, text: string) =>
    lines.push(`${ok ? "✓" : "✗"} ${label.padEnd(LABEL_WIDTH)}${text}`);
  const more = (text: string) => lines.push(`  ${" ".repeat(LABEL_WIDTH)}${text}`);
  const problem = (check: { problem?: string; hint?: string }) => {
    if (check.problem) more(check.problem);
    if (check.hint) more(`fix: ${check.hint}`);
  };

  const { browser, ffmpeg, ffprobe } = report;
  if (browser.path) {
    const capture = browser.headlessShell
      ? "headless shell, fast beginFrame capture"
      : "screenshot capture; chromium-headless-shell would be faster";
    row(
      browser.ok,
      "browser",
      `${browser.version ?? "version unknown"} (${browser.source}, ${capture})`,
    );
    more(browser.path);
    if (browser.reason) more(`why: ${browser.reason}`);
  } else {
    row(false, "browser", "not found");
  }
  problem(browser);

  for (const [label, tool] of [
    ["ffmpeg", ffmpeg],
    ["ffprobe", ffprobe],
  ] as const) {
    if (tool.path) {
      row(tool.ok, label, `${tool.version ?? "version unknown"} (${tool.source})`);
      more(tool.path);
      if (tool.reason) more(`why: ${tool.reason}`);
    } else {
      row(false, label, "not found");
    }
    if (tool === ffmpeg && tool.version) {
      for (const encoder of ffmpeg.encoders) {
        row(encoder.present, `  ${encoder.name}`, encoder.purpose);
      }
    }
    problem(tool);
  }

  lines.push("");
  lines.push(
    report.ok
      ? "Ready: svc can render mp4, webm and mov on this computer."
      : "Not ready: fix the items marked ✗ above.",
  );
  return `${lines.join("\n")}\n`;
}
