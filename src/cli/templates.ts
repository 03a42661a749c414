// `svc templates list` and `svc init [dir] --template NAME`: the starter templates of the gallery
// (src/core/gallery.ts), listed by name with what each is for and the sizes it lays out for, and
// copied into a new project folder ready to preview, fill in and render.
import { relative, resolve } from "node:path";
import type { Command } from "commander";
import { createFromTemplate, listStarterTemplates } from "../core/local";
import type { StarterTemplate } from "../shared/gallery";
import { printJson, runAction } from "./command";
import type { CliIo } from "./io";

/** The template `svc init` starts from when none is named. */
export const DEFAULT_TEMPLATE = "title-card";

export async function runTemplatesList(
  options: { json?: boolean; galleryDir?: string },
  io: CliIo,
): Promise<StarterTemplate[]> {
  const { templates, errors } = await listStarterTemplates(options.galleryDir);
  const cards = templates.map(({ dir: _dir, ...card }) => card);
  if (options.json) {
    printJson(
      io,
      cards.map((card) => ({
        name: card.name,
        title: card.title,
        description: card.description,
        purpose: card.purpose,
        size: card.size,
        sizes: card.sizes,
      })),
    );
  } else {
    const width = Math.max(...cards.map((card) => card.name.length), 4);
    for (const card of cards) {
      io.stdout.write(
        `${card.name.padEnd(width)}  ${card.title} (${card.sizes.join(", ")}): ${card.description}\n`,
      );
    }
    io.stdout.write(`\nStart one with: svc init my-video --template ${cards[0]?.name ?? "NAME"}\n`);
  }
  for (const error of errors) io.stderr.write(`warning: ${error}\n`);
  return cards;
}

export interface InitOptions {
  dir?: string;
  template: string;
  json?: boolean;
  galleryDir?: string;
  signal?: AbortSignal;
}

export async function runInit(options: InitOptions, io: CliIo): Promise<{ dir: string }> {
  const target = resolve(options.dir ?? options.template);
  const { dir, template } = await createFromTemplate({
    name: options.template,
    target,
    ...(options.galleryDir ? { galleryDir: options.galleryDir } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (options.json) {
    printJson(io, { dir, template: template.name, size: template.size, sizes: template.sizes });
  } else {
    const shown = relative(process.cwd(), dir) || ".";
    io.stdout.write(
      `Made ${shown} from the "${template.title}" template.\n` +
        `Check it:  svc check ${shown}\n` +
        `Render it: svc render ${shown} --also ${template.sizes.slice(1).join(",")}\n`,
    );
  }
  return { dir };
}

export function registerTemplatesCommands(program: Command, io: CliIo): void {
  program
    .command("templates")
    .description("the starter templates svc ships")
    .command("list")
    .description("list the starter templates: name, what it is for, the sizes it lays out for")
    .option("--json", "print the templates as a JSON array on stdout")
    .action((flags: { json?: boolean }) =>
      runAction(io, flags.json, () => runTemplatesList(flags, io)),
    );
  program
    .command("init")
    .description("make a new project folder from a starter template")
    .argument("[dir]", "the new project folder (default: the template's name)")
    .option("-t, --template <name>", "the template (svc templates list)", DEFAULT_TEMPLATE)
    .option("--json", "print the new folder as JSON on stdout")
    .action((dir: string | undefined, flags: { template: string; json?: boolean }) =>
      runAction(io, flags.json, (signal) =>
        runInit({ ...flags, ...(dir !== undefined ? { dir } : {}), signal }, io),
      ),
    );
}
