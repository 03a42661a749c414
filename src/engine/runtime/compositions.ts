// Nested compositions (SPEC.md section 2): a host element with `data-composition-src` pulls in a
// file whose content sits in a <template>. We fetch it, mount the template into the host, bind the
// instance's variables, then run its scripts in order while `svc.getVariables()` answers with the
// instance's values. Scripts and styles are scoped to the instance (see scope.ts), and the
// timelines its scripts register are captured per instance, so the same file mounted twice gets
// two independent copies. Paths resolve from the project root (the origin).
import { rewriteCdnUrls } from "../../shared/cdn";
import {
  parseVariablesSchema,
  resolveVariables,
  validateVariables,
  formatVariableIssue,
} from "../../shared/variables";
import type { CompositionInstance, SvcVariablesApi } from "./types";
import {
  applyCssVariables,
  bindElement,
  BOUND_SELECTOR,
  readHostValues,
  SCHEMA_ATTR,
} from "./variables";
import { applyReferenceFonts } from "./fonts";
import { numberAttr, sizeElement } from "./layout";
import { projectUrl, realFetch, resolveSiblingPaths } from "./project-files";
import { lookupTimeline, registeredTimelines } from "./timelines";
import {
  AUTHORED_ID_ATTR,
  AUTHORED_ROOT_ATTR,
  markInstanceHost,
  scopedDocument,
  scopedGsap,
  scopeStylesheet,
  wrapInstanceScript,
} from "./scope";

/** Deeper than this is almost certainly a loop the cycle check could not see (query strings). */
export const MAX_NESTING_DEPTH = 12;

export interface MountContext {
  warnings: string[];
  /** Names what readiness is waiting for; mounting adds and removes entries. */
  waiting: Set<string>;
  /** The instance whose scripts are running right now (read by window.svc.getVariables). */
  setCurrent(instance: CompositionInstance | undefined): void;
  /** Instances in mount order, root first. */
  instances: CompositionInstance[];
  /** Previews only: where CDN URLs in the files are answered (RuntimeOptions.libraryBase). */
  libraryBase?: string;
}

export class CompositionError extends Error {}

interface InstanceScope {
  document: Document;
  readonly gsap: unknown;
  svc: SvcVariablesApi;
}

declare global {
  interface Window {
    __svcScopes?: Record<string, InstanceScope>;
  }
}

let instanceCounter = 0;
const MOUNTING_ATTR = "data-svc-mounting";
let mountingStyle: HTMLStyleElement | undefined;

function hideWhileMounting(host: HTMLElement, hidden: boolean): void {
  if (!mountingStyle) {
    mountingStyle = document.createElement("style");
    mountingStyle.textContent = `[${MOUNTING_ATTR}],[${MOUNTING_ATTR}] *{visibility:hidden!important}`;
    (document.head ?? document.documentElement).append(mountingStyle);
  }
  if (hidden) host.setAttribute(MOUNTING_ATTR, "");
  else host.removeAttribute(MOUNTING_ATTR);
}
const loadedScripts = new Set<string>();

/** Hosts directly owned by `instance` (not inside a deeper host). */
function childHosts(instance: CompositionInstance): HTMLElement[] {
  const hosts = Array.from(
    instance.element.querySelectorAll<HTMLElement>("[data-composition-src]"),
  );
  return hosts.filter((host) => {
    const owner = host.parentElement?.closest("[data-composition-src]");
    return !owner || owner === instance.element || !instance.element.contains(owner);
  });
}

/** Mount every nested composition under `instance`, depth first, in document order. */
export async function mountChildren(
  instance: CompositionInstance,
  context: MountContext,
): Promise<void> {
  const hosts = childHosts(instance);
  // Fetch siblings in parallel, mount them in document order (scripts run in a stable order).
  const files = hosts.map((host) => fetchComposition(host, instance, context));
  // A failure stops the loop at the first bad file; the others must not surface as unhandled.
  for (const file of files) file.catch(() => undefined);
  for (let index = 0; index < hosts.length; index++) {
    const host = hosts[index]!;
    const file = await files[index]!;
    const child = await mountInstance(host, instance, file, context);
    await mountChildren(child, context);
  }
}

/**
 * Compositions written inline (`data-composition-id` with `data-start`, no file) are instances
 * too: their timelines (registered under their id) and clips run on their own clock, `t -
 * data-start`, as in the reference runtime. Called once every file is mounted, so inline
 * compositions inside sub-composition files are found as well. The root element of a mounted file
 * carries its host's id and is part of that instance, not a new one.
 */
export function registerInlineCompositions(context: MountContext): void {
  const root = context.instances[0];
  if (!root) return;
  const byElement = new Map<Element, CompositionInstance>();
  for (const instance of context.instances) byElement.set(instance.element, instance);
  const ownerOf = (element: Element): CompositionInstance => {
    for (let at = element.parentElement; at; at = at.parentElement) {
      const owner = byElement.get(at);
      if (owner) return owner;
    }
    return root;
  };
  const candidates = root.element.querySelectorAll<HTMLElement>(
    "[data-composition-id]:not([data-composition-src])",
  );
  for (const element of Array.from(candidates)) {
    if (byElement.has(element)) continue;
    const parent = ownerOf(element);
    const id = element.getAttribute("data-composition-id") ?? "";
    if (id === parent.id) continue;
    const instance: CompositionInstance = {
      id,
      element,
      parent,
      depth: parent.depth + 1,
      offset: parent.offset + (numberAttr(element, "data-start") ?? 0),
      declaredDuration: numberAttr(element, "data-duration"),
      schema: parent.schema,
      values: parent.values,
      givenValues: parent.givenValues,
      timelines: [],
      src: undefined,
    };
    // A file's scripts that registered this timeline had it captured for the file's instance.
    const own = lookupTimeline(window.__timelines, id);
    if (own) {
      for (const other of context.instances) {
        other.timelines = other.timelines.filter((timeline) => timeline !== own);
      }
      instance.timelines.push(own);
    }
    byElement.set(element, instance);
    context.instances.push(instance);
  }
}

interface FetchedComposition {
  url: string;
  html: string;
}

async function fetchComposition(
  host: HTMLElement,
  parent: CompositionInstance,
  context: MountContext,
): Promise<FetchedComposition> {
  const src = host.getAttribute("data-composition-src") ?? "";
  const url = projectUrl(src);
  const chain: string[] = [];
  for (let at: CompositionInstance | undefined = parent; at; at = at.parent) {
    if (at.src) chain.unshift(at.src);
  }
  if (chain.includes(url) || url === location.href.split("#")[0]) {
    throw new CompositionError(
      `Nested composition cycle: ${[...chain, url].map((u) => new URL(u).pathname).join(" -> ")}`,
    );
  }
  if (parent.depth + 1 > MAX_NESTING_DEPTH) {
    throw new CompositionError(
      `Nested compositions are deeper than ${MAX_NESTING_DEPTH} levels at ${src}`,
    );
  }
  const label = `composition ${src}`;
  context.waiting.add(label);
  try {
    let response: Response;
    try {
      response = await realFetch(url);
    } catch (error) {
      throw new CompositionError(
        `Could not load nested composition ${src}: ${(error as Error).message}`,
      );
    }
    if (!response.ok) {
      throw new CompositionError(
        `Could not load nested composition ${src}: HTTP ${response.status} for ${new URL(url).pathname}`,
      );
    }
    return { url, html: await response.text() };
  } finally {
    context.waiting.delete(label);
  }
}

async function mountInstance(
  host: HTMLElement,
  parent: CompositionInstance,
  file: FetchedComposition,
  context: MountContext,
): Promise<CompositionInstance> {
  const html = context.libraryBase ? rewriteCdnUrls(file.html, context.libraryBase) : file.html;
  const parsed = new DOMParser().parseFromString(html, "text/html");
  const template = parsed.querySelector("template");
  const source: ParentNode = template ? template.content : parsed.body;
  // The file's own root (HyperFrames files wrap their content in one) names the composition when
  // the host does not, and gives its duration when the host has none.
  const innerRoot = source.querySelector<HTMLElement>("[data-composition-id]");
  const id =
    host.getAttribute("data-composition-id") ??
    innerRoot?.getAttribute("data-composition-id") ??
    "";
  const srcLabel = host.getAttribute("data-composition-src") ?? file.url;

  // Schema: the file's <html>, its template's root element, or the host itself.
  const schemaJson =
    parsed.documentElement.getAttribute(SCHEMA_ATTR) ??
    source.querySelector(`[${SCHEMA_ATTR}]`)?.getAttribute(SCHEMA_ATTR) ??
    host.getAttribute(SCHEMA_ATTR);
  const schema = parseVariablesSchema(schemaJson);
  for (const error of schema.errors) context.warnings.push(`${srcLabel}: ${error}`);
  const givenValues = readHostValues(host, context.warnings, srcLabel);
  if (schemaJson !== null) {
    for (const issue of validateVariables(schema.variables, givenValues)) {
      context.warnings.push(`${srcLabel}: ${formatVariableIssue(issue)}`);
    }
  }

  const start = numberAttr(host, "data-start") ?? 0;
  const instance: CompositionInstance = {
    id,
    element: host,
    parent,
    depth: parent.depth + 1,
    offset: parent.offset + start,
    declaredDuration:
      numberAttr(host, "data-duration") ??
      (innerRoot ? numberAttr(innerRoot, "data-duration") : undefined),
    schema: schema.variables,
    values: resolveVariables(schema.variables, givenValues),
    givenValues,
    timelines: [],
    src: file.url,
  };
  context.instances.push(instance);

  const content = document.importNode(source, true) as DocumentFragment | HTMLElement;
  const fragment = document.createDocumentFragment();
  if (content instanceof DocumentFragment) fragment.append(content);
  else fragment.append(...Array.from(content.childNodes));

  // A file whose content sits in its <body> is a standalone page: its <head> styles (where catalog
  // blocks keep all their CSS) and scripts belong to the composition and come first, as the
  // reference runtime assembles them. A <template> file's <head> belongs to the page that previews
  // it; of that only libraries (script src) are kept, so the template's own scripts can use them.
  const headAssets = template
    ? Array.from(parsed.head.querySelectorAll("script[src]"))
    : Array.from(parsed.head.querySelectorAll("style, script"));
  for (const element of headAssets.reverse()) fragment.prepend(document.importNode(element, true));
  const scripts = Array.from(fragment.querySelectorAll("script")).filter(isExecutable);
  const placeholders = scripts.map((script) => {
    const marker = document.createComment("svc-script");
    script.replaceWith(marker);
    return marker;
  });
  // Hoist <link rel=stylesheet> from the file's <head> too (fonts, shared CSS).
  for (const link of Array.from(parsed.head.querySelectorAll("link[rel~=stylesheet]"))) {
    fragment.prepend(document.importNode(link, true));
  }
  await resolveSiblingPaths(fragment, file.url, scripts);
  const instanceKey = String(++instanceCounter);
  const scopeSelector = markInstanceHost(host, instanceKey);
  const fileRoot = fragment.querySelector<HTMLElement>(
    "[data-composition-id]:not([data-composition-src])",
  );
  const authoredRootId = fileRoot?.id || undefined;
  if (fileRoot && authoredRootId) {
    fileRoot.removeAttribute("id");
    fileRoot.setAttribute(AUTHORED_ID_ATTR, authoredRootId);
    host.setAttribute(AUTHORED_ROOT_ATTR, authoredRootId);
  }
  for (const style of Array.from(fragment.querySelectorAll("style"))) {
    style.textContent = scopeStylesheet(style.textContent ?? "", scopeSelector, authoredRootId);
  }
  sizeElement(host);
  host.replaceChildren(fragment);
  const innerMounted = host.querySelector<HTMLElement>(`[data-composition-id="${CSS.escape(id)}"]`);
  if (innerMounted && !innerMounted.hasAttribute("data-composition-src")) sizeElement(innerMounted);

  for (const element of Array.from(host.querySelectorAll(BOUND_SELECTOR))) {
    const owner = element.closest("[data-composition-src]");
    if (owner === host) bindElement(element, instance.values);
  }

  applyReferenceFonts();
  // While its scripts run, the composition is hidden, as in the reference runtime: a script that
  // reads its elements' computed visibility (to paint them into a canvas, say) sees them hidden.
  hideWhileMounting(host, true);
  try {
    await runInstanceScripts(instance, scripts, placeholders, instanceKey, srcLabel, context);
  } finally {
    hideWhileMounting(host, false);
  }
  // After the scripts, as the reference applies them: a script that resolves a theme token of the
  // same name (`var(--accent)`) once at mount sees the page's token, not the instance's value.
  applyCssVariables(host, instance.values);
  return instance;
}

function isExecutable(script: HTMLScriptElement): boolean {
  const type = (script.getAttribute("type") ?? "").trim().toLowerCase();
  return (
    type === "" ||
    type === "module" ||
    type === "text/javascript" ||
    type === "application/javascript"
  );
}

async function runInstanceScripts(
  instance: CompositionInstance,
  scripts: HTMLScriptElement[],
  placeholders: Comment[],
  instanceKey: string,
  label: string,
  context: MountContext,
): Promise<void> {
  const host = instance.element;
  const scope: InstanceScope = {
    document: scopedDocument(host),
    get gsap() {
      return scopedGsap(host, (window as unknown as { gsap?: unknown }).gsap);
    },
    svc: { getVariables: () => ({ ...instance.values }) },
  };
  window.__svcScopes ??= {};
  window.__svcScopes[instanceKey] = scope;

  const before = new Set(registeredTimelines());
  for (let index = 0; index < scripts.length; index++) {
    const original = scripts[index]!;
    const marker = placeholders[index]!;
    const src = original.getAttribute("src");
    const isModule = (original.getAttribute("type") ?? "").trim().toLowerCase() === "module";
    const script = document.createElement("script");
    for (const attr of Array.from(original.attributes)) {
      if (attr.name !== "src") script.setAttribute(attr.name, attr.value);
    }
    if (src !== null) {
      const url =
        src.startsWith("./") || src.startsWith("../")
          ? new URL(src, instance.src).href
          : projectUrl(src);
      if (loadedScripts.has(url) || isAlreadyInDocument(url) || isLoadedLibrary(url)) {
        marker.remove();
        continue;
      }
      loadedScripts.add(url);
      script.src = url;
      const name = `script ${src}`;
      context.waiting.add(name);
      const loaded = new Promise<void>((resolve) => {
        script.addEventListener("load", () => resolve(), { once: true });
        // A failed load is a finding of diagnostics.ts ("load-failed"); the mount goes on.
        script.addEventListener("error", () => resolve(), { once: true });
      });
      context.setCurrent(instance);
      marker.replaceWith(script);
      await loaded;
      context.setCurrent(undefined);
      context.waiting.delete(name);
      continue;
    }
    const body = original.textContent ?? "";
    script.textContent = isModule
      ? body
      : wrapInstanceScript(body, instanceKey, `svc-composition/${label}#${index + 1}`);
    // Inline classic scripts run synchronously on insertion, so the instance is "current" for
    // exactly the duration of its own code.
    context.setCurrent(instance);
    try {
      marker.replaceWith(script);
    } finally {
      context.setCurrent(undefined);
    }
  }
  // Whatever the scripts registered is this instance's, wherever it was registered: the same
  // file mounted twice overwrites the same key, and some files register under their inner id.
  const own = lookupTimeline(window.__timelines, instance.id);
  for (const timeline of registeredTimelines()) {
    if (before.has(timeline)) continue;
    if (timeline === own) instance.timelines.unshift(timeline);
    else instance.timelines.push(timeline);
  }
}

/** A second copy of GSAP (say from a CDN URL in the sub-file) would replace the page's instance. */
function isLoadedLibrary(url: string): boolean {
  const file = new URL(url).pathname.split("/").pop() ?? "";
  return /^gsap(\.min)?\.js$/i.test(file) && "gsap" in window;
}

function isAlreadyInDocument(url: string): boolean {
  for (const script of Array.from(document.scripts)) {
    if (script.src === url) return true;
  }
  return false;
}
