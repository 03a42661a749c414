// Human progress of a cloud render on stderr: one line per stage, and while uploading,
// rendering and downloading a progress line (bytes/s and ETA for transfers, percent for the
// render), redrawn on a TTY and printed as plain lines otherwise.
import { formatBytes } from "../../shared/archive-report";
import type { RenderEvent } from "../../core/index";
import { createProgressLine, type ProgressLine } from "../progress";
import type { OutputStream } from "../io";

const STAGE_TEXT: Record<string, string> = {
  scan: "Reading the project",
  archive: "Zipping the project",
  upload: "Uploading",
  submit: "Submitting the render",
  render: "Rendering",
  download: "Downloading",
};

function transferText(
  verb: string,
  bytes: number,
  total: number | undefined,
  startedMs: number,
): string {
  const seconds = Math.max((Date.now() - startedMs) / 1000, 0.001);
  const rate = bytes / seconds;
  const eta = total !== undefined && rate > 0 ? ` · ETA ${Math.ceil((total - bytes) / rate)}s` : "";
  return `${verb} ${formatBytes(bytes)}${total !== undefined ? ` / ${formatBytes(total)}` : ""} · ${formatBytes(Math.round(rate))}/s${eta}`;
}

export interface CloudProgress {
  onEvent(event: RenderEvent): void;
  done(): void;
}

export function createCloudProgress(options: {
  quiet?: boolean;
  stream: OutputStream;
}): CloudProgress {
  const stream = options.stream;
  let line: ProgressLine | undefined;
  let stageStarted = Date.now();
  const warned = new Set<string>();
  const finishLine = () => {
    line?.done();
    line = undefined;
  };
  return {
    onEvent(event) {
      if (options.quiet && event.type !== "warning") return;
      switch (event.type) {
        case "stage":
          finishLine();
          stageStarted = Date.now();
          stream.write(`${STAGE_TEXT[event.stage] ?? event.stage}…\n`);
          return;
        case "warning":
          // The local scan and the service may find the same thing: say it once.
          if (warned.has(event.message)) return;
          warned.add(event.message);
          finishLine();
          stream.write(`warning: ${event.message}\n`);
          return;
        case "archive":
          stream.write(
            `  ${event.report.file_count} files, ${formatBytes(event.report.size_bytes)} zipped\n`,
          );
          return;
        case "upload-progress":
        case "download-progress":
          line ??= createProgressLine(stream);
          line.update(
            event.totalBytes ? event.bytes / event.totalBytes : 0,
            transferText(
              event.type === "upload-progress" ? "uploaded" : "downloaded",
              event.bytes,
              event.totalBytes,
              stageStarted,
            ),
          );
          return;
        case "render-status": {
          line ??= createProgressLine(stream);
          const { record } = event;
          line.update(record.progress, `${record.status} ${record.render_id}`);
          return;
        }
        case "state":
          return;
      }
    },
    done: finishLine,
  };
}
