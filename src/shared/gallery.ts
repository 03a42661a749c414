// The starter templates' card (`gallery/<name>/template.json`): what the app's "New video" gallery
// and `svc templates list` show about a template without reading its HTML. The project itself is
// an ordinary composition; this card only names it, says what it is for and which sizes it lays
// out for. Parsing never throws: a bad card becomes an error string naming the file and the field.
import { z } from "zod";
import { ASPECT_RATIOS } from "./render-options";

/** What a template is for: the gallery's filter. */
export const TEMPLATE_PURPOSES = ["intro", "promo", "social", "business", "event", "data"] as const;
export type TemplatePurpose = (typeof TEMPLATE_PURPOSES)[number];

/** The words the app shows for each purpose. */
export const PURPOSE_LABELS: Record<TemplatePurpose, string> = {
  intro: "Intros and titles",
  promo: "Promos and ads",
  social: "Social posts",
  business: "Business",
  event: "Events",
  data: "Numbers and charts",
};

const aspect = z.enum(ASPECT_RATIOS);

export const templateCardSchema = z
  .object({
    title: z.string().min(1).max(60),
    description: z.string().min(1).max(300),
    purpose: z.enum(TEMPLATE_PURPOSES),
    /** The size the template is made at (its data-width/data-height). */
    size: aspect,
    /** Every size it lays out for with `data-aspect-ratio` CSS, its own first. */
    sizes: z.array(aspect).min(1),
    /** The moment its poster (the gallery tile) shows, in seconds. */
    posterTime: z.number().nonnegative(),
  })
  .strict()
  .refine((card) => card.sizes[0] === card.size, {
    error: "sizes must start with size, the one the template is made at",
  });

export type TemplateCard = z.output<typeof templateCardSchema>;

/** A template as lists show it: its folder name and its card. */
export interface StarterTemplate extends TemplateCard {
  /** The folder name under gallery/, used by `svc init --template NAME`. */
  name: string;
}

/** Template names are folder names: lower-case words joined by hyphens. */
export const TEMPLATE_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export function parseTemplateCard(
  name: string,
  json: unknown,
): { ok: true; template: StarterTemplate } | { ok: false; error: string } {
  const parsed = templateCardSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message,
    );
    return { ok: false, error: `gallery/${name}/template.json: ${problems.join("; ")}` };
  }
  return { ok: true, template: { name, ...parsed.data } };
}
