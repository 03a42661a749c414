// A progress bar with its percent and ETA written beside it ("42% · about 0:12 left"), for a
// queued render at any stage (rendering follows the service's own progress) and for a whole batch.
import { formatSeconds } from "../render-plan";

export function ProgressLine({
  label,
  progress,
  etaSeconds,
}: {
  label: string;
  progress: number;
  etaSeconds: number | undefined;
}) {
  const percent = Math.round(Math.max(0, Math.min(1, progress)) * 100);
  return (
    <div className="progress-line">
      <progress max={1} value={progress} aria-label={label} />
      <span className="progress-text" data-testid="progress-text">
        {percent}%{etaSeconds !== undefined ? ` · about ${formatSeconds(etaSeconds)} left` : ""}
      </span>
    </div>
  );
}
