// The example projects that ship with the app (the repository's examples/ folder), for the
// Project screen's "Try an example": a new user reaches a preview and a render in two clicks.
// The first line of prose in each README says what the example shows; lower-third comes first,
// because it declares a variable of every type (the form, strict mode and "Render many…").
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ExampleProject } from "../shared/ipc";

const FIRST = "lower-third";

export async function listExamples(examplesDir: string): Promise<ExampleProject[]> {
  const entries = await readdir(examplesDir, { withFileTypes: true }).catch(() => []);
  const found: ExampleProject[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const dir = join(examplesDir, entry.name);
    const hasEntry = await readFile(join(dir, "index.html"))
      .then(() => true)
      .catch(() => false);
    if (!hasEntry) continue;
    const readme = await readFile(join(dir, "README.md"), "utf8").catch(() => "");
    found.push({ name: entry.name, dir, description: firstParagraph(readme) });
  }
  return found.sort((a, b) =>
    a.name === FIRST ? -1 : b.name === FIRST ? 1 : a.name.localeCompare(b.name),
  );
}

/** The first paragraph of prose after the title, as plain text. */
function firstParagraph(markdown: string): string {
  const paragraphs = markdown.split(/\n\s*\n/).map((p) => p.trim());
  const prose = paragraphs.find((p) => p !== "" && !p.startsWith("#") && !p.startsWith("|"));
  return (prose ?? "")
    .replace(/\s+/g, " ")
    .replace(/\*\*|`/g, "")
    .replace(/:$/, ".");
}
