// What the service's engine found about the page while rendering it (a missing image, a font that
// did not load), under a queued render or a History render: the video was made, but may not look as
// meant. Each finding once; past three, the rest fold away so a long list keeps the row short.
import type { RenderRecord } from "../../shared/api";

const SHOWN = 3;

/** A render record's findings about the page (its `composition` warnings), each once. */
export function pageWarningsOf(render: Pick<RenderRecord, "warnings">): string[] {
  return [
    ...new Set(
      render.warnings
        .filter((warning) => warning.code === "composition")
        .map((warning) => warning.message),
    ),
  ];
}

export function PageWarnings({ warnings }: { warnings: string[] | undefined }) {
  const unique = [...new Set(warnings ?? [])];
  if (unique.length === 0) return null;
  const item = (message: string) => (
    <li key={message} className="finding">
      {message}
    </li>
  );
  return (
    <section className="findings page-warnings" aria-label="Problems found in the page">
      <h3>
        {unique.length === 1
          ? "While rendering, the service found a problem in the page:"
          : `While rendering, the service found ${unique.length} problems in the page:`}
      </h3>
      <ul>{unique.slice(0, SHOWN).map(item)}</ul>
      {unique.length > SHOWN ? (
        <details>
          <summary>Show {unique.length - SHOWN} more</summary>
          <ul>{unique.slice(SHOWN).map(item)}</ul>
        </details>
      ) : null}
    </section>
  );
}
