// `svc doctor [--json]`: is this computer ready to render? Prints the engine's doctor report
// (browser, FFmpeg and its encoders, ffprobe) and exits 1 when something needed is missing.
import type { Command } from "commander";
import { runDoctor } from "../engine/index";
import type { DoctorReport } from "../engine/index";
import { printJson, runAction } from "./command";
import type { CliIo } from "./io";

export interface DoctorOptions {
  json?: boolean;
}

/** Prints the report (--json: its fields in snake_case) and sets exit code 1 when not ready. */
export async function runDoctorCommand(options: DoctorOptions, io: CliIo): Promise<DoctorReport> {
  const report = await runDoctor(io.env);
  if (options.json) {
    const { headlessShell, ...browser } = report.browser;
    const { serviceRenders, mediaFfmpeg, ...rest } = report;
    printJson(io, {
      ...rest,
      browser: {
        ...browser,
        ...(headlessShell !== undefined ? { headless_shell: headlessShell } : {}),
      },
      media_ffmpeg: mediaFfmpeg,
      ...(serviceRenders
        ? {
            service_renders: {
              network: serviceRenders.network,
              sandbox: serviceRenders.sandbox,
              ...(serviceRenders.uid !== undefined ? { uid: serviceRenders.uid } : {}),
              reason: serviceRenders.reason,
              sandbox_reason: serviceRenders.sandboxReason,
            },
          }
        : {}),
    });
  } else {
    io.stdout.write(formatDoctorReport(report));
  }
  io.exitCode = report.ok ? 0 : 1;
  return report;
}

export function registerDoctorCommand(program: Command, io: CliIo): void {
  program
    .command("doctor")
    .description("check the browser and FFmpeg that renders need, and what to install if missing")
    .option("--json", "print the report as JSON on stdout")
    .action((flags: DoctorOptions) => runAction(io, flags.json, () => runDoctorCommand(flags, io)));
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
  const fence = report.serviceRenders;
  if (fence) {
    // Not a readiness check: renders work either way; this says how safely.
    row(
      fence.network === "namespace" && fence.sandbox,
      "page fence",
      `network ${fence.network === "namespace" ? "closed by a namespace" : "closed by browser switches only"}, Chromium sandbox ${fence.sandbox ? "on" : "off"}`,
    );
    more(`why: ${fence.reason}`);
    more(`sandbox: ${fence.sandboxReason}`);
  }

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

  const media = report.mediaFfmpeg;
  if (media.path) {
    row(media.ok, "media ffmpeg", `${media.version ?? "version unknown"} (${media.source})`);
    more(media.path);
    more("decodes customers' audio and video; svc's own frames go through the ffmpeg above");
    if (media.reason) more(`why: ${media.reason}`);
  }

  lines.push("");
  lines.push(
    report.ok
      ? "Ready: svc can render mp4, webm, mov, gif and png-sequence on this computer."
      : "Not ready: fix the items marked ✗ above.",
  );
  return `${lines.join("\n")}\n`;
}
