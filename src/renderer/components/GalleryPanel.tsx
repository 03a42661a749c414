// "New video": the starter templates as tiles (each a picture of the template itself), filtered by
// size and purpose. Choosing one asks for the new video's name and makes it in the Videos folder;
// it then opens with its variables form like any project. No HTML, path or file name is shown.
import { useState } from "react";
import { ASPECT_RATIOS, type AspectRatio } from "../../shared/render-options";
import { PURPOSE_LABELS, TEMPLATE_PURPOSES, type TemplatePurpose } from "../../shared/gallery";
import type { StarterTemplate } from "../../shared/ipc";
import { useCreateFromTemplate, useStarterTemplates, useTemplatePoster } from "../hooks/gallery";
import { useUiStore } from "../store";
import { ErrorNote } from "./ErrorNote";

const SIZE_WORDS: Record<AspectRatio, string> = {
  "16:9": "Wide 16:9",
  "9:16": "Tall 9:16",
  "1:1": "Square 1:1",
};

function Tile({ template, onPick }: { template: StarterTemplate; onPick(): void }) {
  const poster = useTemplatePoster(template.name);
  const [w, h] = template.size.split(":").map(Number) as [number, number];
  return (
    <li className="gallery-tile">
      <button
        type="button"
        onClick={onPick}
        aria-label={`${template.title}: ${template.description}`}
      >
        <span className="gallery-picture" style={{ aspectRatio: `${w} / ${h}` }}>
          {poster.data ? (
            <img src={poster.data.url} alt="" data-testid="gallery-poster" />
          ) : (
            <span className="muted">{poster.error ? "No picture" : "Drawing…"}</span>
          )}
        </span>
        <span className="gallery-title">{template.title}</span>
        <span className="gallery-sizes">
          {template.sizes.map((size) => (
            <span key={size} className="chip">
              {SIZE_WORDS[size]}
            </span>
          ))}
        </span>
        <span className="muted gallery-description">{template.description}</span>
      </button>
    </li>
  );
}

function NameStep({ template, onBack }: { template: StarterTemplate; onBack(): void }) {
  const [name, setName] = useState(template.title);
  const create = useCreateFromTemplate();
  return (
    <form
      className="gallery-name"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate({ name: template.name, folderName: name });
      }}
    >
      <h3>{template.title}</h3>
      <p className="muted">{template.description}</p>
      <label>
        Name of your video
        <input value={name} onChange={(event) => setName(event.target.value)} autoFocus />
      </label>
      <p className="muted">It is kept in your Videos folder, and listed under Recent.</p>
      <div className="row">
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Making it…" : "Make my video"}
        </button>
        <button type="button" onClick={onBack}>
          Back to the templates
        </button>
      </div>
      {create.error ? <ErrorNote error={create.error} /> : null}
    </form>
  );
}

export function GalleryPanel() {
  const templates = useStarterTemplates();
  const setGalleryOpen = useUiStore((state) => state.setGalleryOpen);
  const [size, setSize] = useState<AspectRatio | "">("");
  const [purpose, setPurpose] = useState<TemplatePurpose | "">("");
  const [picked, setPicked] = useState<StarterTemplate | undefined>();
  const shown = (templates.data ?? []).filter(
    (template) => (!size || template.size === size) && (!purpose || template.purpose === purpose),
  );
  return (
    <section className="panel gallery" aria-labelledby="gallery-title">
      <div className="panel-head">
        <h2 id="gallery-title">New video</h2>
        <button type="button" onClick={() => setGalleryOpen(false)}>
          Close
        </button>
      </div>
      {picked ? (
        <NameStep template={picked} onBack={() => setPicked(undefined)} />
      ) : (
        <>
          <p className="muted">Pick a ready video, then change its words, pictures and colours.</p>
          <div className="row gallery-filters">
            <label className="inline">
              Made for
              <select
                value={size}
                onChange={(event) => setSize(event.target.value as AspectRatio | "")}
              >
                <option value="">Every size</option>
                {ASPECT_RATIOS.map((ratio) => (
                  <option key={ratio} value={ratio}>
                    {SIZE_WORDS[ratio]}
                  </option>
                ))}
              </select>
            </label>
            <label className="inline">
              Kind
              <select
                value={purpose}
                onChange={(event) => setPurpose(event.target.value as TemplatePurpose | "")}
              >
                <option value="">Every kind</option>
                {TEMPLATE_PURPOSES.map((entry) => (
                  <option key={entry} value={entry}>
                    {PURPOSE_LABELS[entry]}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {templates.isPending ? <p role="status">Looking for the templates…</p> : null}
          {templates.error ? (
            <ErrorNote error={templates.error} title="The templates cannot be listed." />
          ) : null}
          {templates.data && shown.length === 0 ? (
            <p className="muted">No template of this size and kind. Try another filter.</p>
          ) : null}
          <ul className="gallery-grid">
            {shown.map((template) => (
              <Tile key={template.name} template={template} onPick={() => setPicked(template)} />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
