// Project: choose (or drop) a folder and a composition, preview it, set its variables and render
// options, check the upload with a dry run, then render (a queued render in the queue) or render
// many videos from a table ("Render many…"); the equivalent command line waits behind "For
// developers". With no project open, "Try an example" opens one of the bundled examples. A folder
// joins Recent once it opened; its choices are remembered (store.ts).
import { useEffect, useState, type DragEvent } from "react";
import { DryRunReport } from "../components/DryRunReport";
import { ErrorNote } from "../components/ErrorNote";
import { FolderBrowser } from "../components/FolderBrowser";
import { GalleryPanel } from "../components/GalleryPanel";
import { Preview } from "../components/Preview";
import { PreviewFindings } from "../components/PreviewFindings";
import { QueuedNote } from "../components/QueuedNote";
import { RenderManyPanel } from "../components/RenderManyPanel";
import { RenderOptionsForm } from "../components/RenderOptionsForm";
import { VariablesForm } from "../components/VariablesForm";
import { CaptionsPanel } from "../components/CaptionsPanel";
import { CAPTION_FILE, loadCaptionFile, useProjectCaptions } from "../hooks/captions";
import { useDropFolder, usePickFolder } from "../hooks/folders";
import {
  useDryRun,
  usePreviewUrl,
  useProjectCheck,
  useProjectScan,
  useSettled,
  useVariableState,
} from "../hooks/project";
import { useExamples } from "../hooks/media";
import { useRenderActions } from "../hooks/render-actions";
import { formatSeconds, tickedSizes } from "../render-plan";
import type { AspectRatio } from "../../shared/render-options";
import { IpcCallError } from "../../shared/ipc";
import { compositionTitle, folderName, folderNames } from "../creator-names";
import { useUiStore } from "../store";

function ProjectPicker() {
  const dir = useUiStore((state) => state.projectDir);
  const recent = useUiStore((state) => state.recentProjects);
  const openProject = useUiStore((state) => state.openProject);
  const browserOpen = useUiStore((state) => state.folderBrowserOpen);
  const pick = usePickFolder();
  const setGalleryOpen = useUiStore((state) => state.setGalleryOpen);
  const recentNames = folderNames(recent);
  return (
    <section className="project-bar" aria-label="Project folder">
      <button type="button" className="primary" onClick={() => setGalleryOpen(true)}>
        New video
      </button>
      <button type="button" onClick={() => pick.mutate()}>
        Choose folder…
      </button>
      <span className="project-name" aria-label="Open project">
        {dir ? folderName(dir) : "No project open"}
      </span>
      {recent.length > 0 ? (
        <label className="inline">
          Recent
          <select
            value=""
            onChange={(event) => event.target.value && openProject(event.target.value)}
          >
            <option value="">Recent projects…</option>
            {recent.map((path) => (
              <option key={path} value={path}>
                {recentNames.get(path)}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {dir ? (
        <details className="developers">
          <summary>For developers</summary>
          <p className="hint-line">
            Folder: <code className="path">{dir}</code>
          </p>
        </details>
      ) : null}
      {pick.error ? <ErrorNote error={pick.error} /> : null}
      {browserOpen ? <FolderBrowser /> : null}
    </section>
  );
}

/** Once the open folder scanned as a project: into Recent. A remembered composition gone: forget it. */
function useProjectOutcome() {
  const dir = useUiStore((state) => state.projectDir);
  const composition = useUiStore((state) => state.composition);
  const rememberRecent = useUiStore((state) => state.rememberRecent);
  const setComposition = useUiStore((state) => state.setComposition);
  const scan = useProjectScan();
  const root = scan.data?.root;
  const missing = scan.error instanceof IpcCallError && scan.error.code === "composition_not_found";
  useEffect(() => {
    if (dir && root) rememberRecent(dir);
  }, [dir, root, rememberRecent]);
  useEffect(() => {
    if (missing && composition) useUiStore.setState({ composition: undefined });
  }, [missing, composition, setComposition]);
}

function CompositionDetails() {
  const scan = useProjectScan();
  const setComposition = useUiStore((state) => state.setComposition);
  const fps = useUiStore((state) => state.render.fps);
  const variables = useVariableState();
  const settledValues = useSettled(variables.values);
  const project = scan.data;
  const captions = useProjectCaptions(useUiStore((state) => state.projectDir));
  const preview = usePreviewUrl(project?.composition);
  const checkedValues = useSettled(variables.values, 1000);
  const check = useProjectCheck(project?.composition, checkedValues);
  // The preview can show each size ticked under Render options, as its render lays it out.
  const render = useUiStore((state) => state.render);
  const sizes = tickedSizes(render, project?.aspectRatio);
  const [previewSize, setPreviewSize] = useState<AspectRatio | undefined>();
  const shownSize = previewSize && sizes.includes(previewSize) ? previewSize : sizes[0];
  if (scan.isPending) return <p role="status">Reading the project…</p>;
  if (scan.error)
    return (
      <ErrorNote
        error={scan.error}
        title={
          scan.error instanceof IpcCallError && scan.error.code === "no_composition"
            ? "No composition in this folder."
            : "This folder cannot be opened."
        }
      />
    );
  if (!project) return null;
  return (
    <section className="panel preview-panel" aria-labelledby="composition-title">
      <div className="panel-head">
        <h2 id="composition-title">Composition</h2>
        <label className="inline">
          <span className="sr-only">Composition</span>
          <select
            aria-label="Composition"
            value={project.composition}
            onChange={(event) => setComposition(event.target.value)}
          >
            {(project.compositions.length > 0 ? project.compositions : [project.composition]).map(
              (file) => (
                <option key={file} value={file}>
                  {compositionTitle(file)}
                </option>
              ),
            )}
          </select>
        </label>
      </div>
      <dl className="facts">
        <div>
          <dt>Size</dt>
          <dd data-testid="detected-size">
            {project.width}×{project.height}
          </dd>
        </div>
        <div>
          <dt>Aspect</dt>
          <dd>{project.aspectRatio}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>
            {project.duration === undefined
              ? "unknown"
              : `${formatSeconds(project.duration)} (${project.duration} s)`}
          </dd>
        </div>
      </dl>
      {project.schemaErrors.length > 0 ? (
        <ul className="issue">
          {project.schemaErrors.map((error) => (
            <li key={error}>{error}</li>
          ))}
        </ul>
      ) : null}
      {sizes.length > 1 ? (
        <label className="inline">
          Preview size
          <select
            value={shownSize}
            onChange={(event) => setPreviewSize(event.target.value as AspectRatio)}
          >
            {sizes.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {preview.data ? (
        <Preview
          url={preview.data.url}
          fps={Number.isFinite(fps) ? fps : 30}
          values={settledValues}
          captions={captions}
          aspectRatio={shownSize !== project.aspectRatio ? shownSize : undefined}
        />
      ) : preview.error ? (
        <ErrorNote error={preview.error} title="The preview cannot start." />
      ) : (
        <p role="status">Starting the preview…</p>
      )}
      <PreviewFindings
        findings={check.data?.findings}
        pending={check.isPending}
        error={check.error}
      />
    </section>
  );
}

function Actions() {
  const { blockedBy, command, copy, submit, startRender } = useRenderActions();
  const dryRun = useDryRun();
  const dir = useUiStore((state) => state.projectDir);
  const batchOpen = useUiStore((state) => state.batch.open);
  const setBatchOpen = useUiStore((state) => state.setBatchOpen);
  return (
    <section className="panel" aria-labelledby="actions-title">
      <h2 id="actions-title">Render</h2>
      <div className="actions">
        <button type="button" disabled={!dir || dryRun.isPending} onClick={() => dryRun.mutate()}>
          {dryRun.isPending ? "Checking…" : "Dry run"}
        </button>
        <button
          type="button"
          className="primary"
          disabled={Boolean(blockedBy) || submit.isPending}
          onClick={startRender}
        >
          Render
        </button>
        <button
          type="button"
          aria-expanded={batchOpen}
          disabled={!dir}
          onClick={() => setBatchOpen(!batchOpen)}
        >
          Render many…
        </button>
      </div>
      {blockedBy && dir ? <p className="issue">{blockedBy}</p> : null}
      {command ? (
        <details className="developers">
          <summary>For developers</summary>
          <p className="hint-line">The same render from a terminal, with the svc command line:</p>
          <pre className="command" aria-label="CLI command">
            {command}
          </pre>
          <div className="actions">
            <button type="button" onClick={() => copy.mutate()}>
              Copy CLI command
            </button>
          </div>
          {copy.isSuccess ? <p className="ok">Copied to the clipboard.</p> : null}
          {copy.error ? <ErrorNote error={copy.error} title="Could not copy." /> : null}
        </details>
      ) : null}
      {submit.data ? <QueuedNote title={submit.data.title} /> : null}
      {submit.error ? <ErrorNote error={submit.error} title="Could not start the render." /> : null}
      {dryRun.error ? <ErrorNote error={dryRun.error} title="The dry run failed." /> : null}
      {dryRun.data ? <DryRunReport report={dryRun.data} /> : null}
    </section>
  );
}

function FirstRun() {
  const examples = useExamples();
  const openProject = useUiStore((state) => state.openProject);
  const [first, ...others] = examples.data ?? [];
  return (
    <div className="empty-hero">
      <h2>Open a project to start</h2>
      <p>
        A project is a folder holding a video made for svc. Start from a template with "New video",
        or choose a folder (or drop it here from your file manager) to preview it, fill in its
        variables and render it.
      </p>
      {first ? (
        <>
          <p>
            New here?{" "}
            <button type="button" className="primary" onClick={() => openProject(first.dir)}>
              Try an example
            </button>
          </p>
          <p className="muted">
            {first.name}: {first.description}
          </p>
          {others.length > 0 ? (
            <p className="example-list">
              More examples:{" "}
              {others.map((example) => (
                <button
                  key={example.name}
                  type="button"
                  className="link"
                  title={example.description}
                  onClick={() => openProject(example.dir)}
                >
                  {example.name}
                </button>
              ))}
            </p>
          ) : null}
        </>
      ) : examples.isPending ? (
        <p role="status">Looking for the examples…</p>
      ) : examples.error ? (
        <ErrorNote error={examples.error} title="The bundled examples cannot be listed." />
      ) : null}
    </div>
  );
}

const DROPPABLE = ["Files", "text/uri-list", "text/plain"];

export function ProjectScreen() {
  const dir = useUiStore((state) => state.projectDir);
  const scan = useProjectScan();
  const drop = useDropFolder();
  const batchOpen = useUiStore((state) => state.batch.open);
  const galleryOpen = useUiStore((state) => state.galleryOpen);
  const [dragging, setDragging] = useState(false);
  useProjectOutcome();
  const accepts = (event: DragEvent) =>
    DROPPABLE.some((type) => event.dataTransfer.types.includes(type));
  return (
    <div
      className={dragging ? "screen project-screen dragging" : "screen project-screen"}
      onDragOver={(event) => {
        if (!accepts(event)) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = "copy";
        setDragging(true);
      }}
      onDragLeave={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false);
      }}
      onDrop={(event) => {
        event.preventDefault();
        setDragging(false);
        // A subtitle file dropped on an open project adds its captions.
        const captionFile = [...event.dataTransfer.files].find((file) =>
          CAPTION_FILE.test(file.name),
        );
        if (captionFile && dir) {
          void loadCaptionFile(dir, captionFile);
          return;
        }
        drop.mutate({
          files: [...event.dataTransfer.files],
          uriList: event.dataTransfer.getData("text/uri-list"),
          text: event.dataTransfer.getData("text/plain"),
        });
      }}
    >
      <ProjectPicker />
      {dragging ? (
        <p className="drop-hint" aria-hidden="true">
          {dir
            ? "Drop a project folder to open it, or a subtitle file to add captions"
            : "Drop a project folder to open it"}
        </p>
      ) : null}
      {drop.error ? <ErrorNote error={drop.error} title="Cannot open the dropped item." /> : null}
      {galleryOpen ? (
        <GalleryPanel />
      ) : dir ? (
        <div className="project-grid">
          <div className="column">
            <CompositionDetails />
          </div>
          <div className="column">
            {scan.data ? (
              <>
                <VariablesForm />
                <CaptionsPanel />
                <RenderOptionsForm
                  detectedAspect={scan.data.aspectRatio}
                  duration={scan.data.duration}
                  composition={scan.data.composition}
                />
                <Actions />
              </>
            ) : null}
          </div>
          {batchOpen && scan.data ? (
            <div className="wide">
              <RenderManyPanel />
            </div>
          ) : null}
        </div>
      ) : (
        <FirstRun />
      )}
    </div>
  );
}
