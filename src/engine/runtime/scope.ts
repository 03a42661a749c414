// Isolation for nested composition instances. A sub-composition file is written as if it were
// alone on the page (`document.querySelector(".title")`, `gsap.to(".title", ...)`, `.title {}` in
// its <style>), yet the same file may be mounted twice with different variables. So each instance
// runs its inline scripts inside a function whose `document`, `gsap` and `svc` look inside the
// instance first, and its styles are wrapped in `@scope (<host>)`. Top-level `const tl` in two
// files no longer collides either, because each script body is its own function scope.

type AnyFunction = (...args: unknown[]) => unknown;

/**
 * A file's own root element keeps its `id` only as this attribute once mounted: the page that
 * hosts the file often uses the same id (`#root`), and its `#root { width: 1920px }` would size the
 * file's root too. The reference renderer puts the file's root into the host, so neither sees the
 * other's id rules; here `#id` in the file's styles, queries and getElementById means this
 * attribute, and the host names the id in AUTHORED_ROOT_ATTR.
 */
export const AUTHORED_ID_ATTR = "data-svc-authored-id";
export const AUTHORED_ROOT_ATTR = "data-svc-authored-root";

/** `selector` with `#<the file's root id>` pointing at that root (see AUTHORED_ID_ATTR). */
export function authoredRootSelector(host: Element, selector: string): string {
  const id = host.getAttribute(AUTHORED_ROOT_ATTR);
  return id ? rewriteIdSelector(selector, id) : selector;
}

function rewriteIdSelector(selector: string, id: string): string {
  const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return selector.replace(
    new RegExp(`#${escaped}(?![\\w-])`, "g"),
    `[${AUTHORED_ID_ATTR}="${CSS.escape(id)}"]`,
  );
}

/** Elements matching `selector` in the instance (its host included), else in the whole document. */
export function scopedQueryAll(host: Element, rawSelector: string): Element[] {
  const found: Element[] = [];
  const selector = authoredRootSelector(host, rawSelector);
  try {
    if (host.matches(selector)) found.push(host);
    found.push(...Array.from(host.querySelectorAll(selector)));
  } catch {
    // an invalid selector: let the document throw the usual error below
  }
  return found.length > 0 ? found : Array.from(document.querySelectorAll(selector));
}

export function scopedDocument(host: Element): Document {
  const overrides: Record<string | symbol, unknown> = {
    querySelector: (selector: string) => scopedQueryAll(host, selector)[0] ?? null,
    querySelectorAll: (selector: string) => scopedQueryAll(host, selector),
    getElementById: (id: string) => {
      const inHost =
        host.id === id
          ? host
          : host.getAttribute(AUTHORED_ROOT_ATTR) === id
            ? host.querySelector(`[${AUTHORED_ID_ATTR}="${CSS.escape(id)}"]`)
            : host.querySelector(`[id="${CSS.escape(id)}"]`);
      return inHost ?? document.getElementById(id);
    },
    getElementsByClassName: (names: string) => {
      const inHost = host.getElementsByClassName(names);
      return inHost.length > 0 ? inHost : document.getElementsByClassName(names);
    },
  };
  const bound = new Map<string | symbol, unknown>();
  return new Proxy(document, {
    get(target, property) {
      if (property in overrides) return overrides[property];
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      let fn = bound.get(property);
      if (!fn) {
        fn = (value as AnyFunction).bind(target);
        bound.set(property, fn);
      }
      return fn;
    },
    set(target, property, value) {
      return Reflect.set(target, property, value, target);
    },
  });
}

const TARGET_METHODS = ["to", "from", "fromTo", "set"] as const;

function scopeTargets(host: Element, target: unknown): unknown {
  return typeof target === "string" ? scopedQueryAll(host, target) : target;
}

/** Patch a timeline's tween methods so string targets resolve inside the instance. */
function scopeTimeline(host: Element, timeline: Record<string, unknown>): void {
  for (const method of TARGET_METHODS) {
    const original = timeline[method];
    if (typeof original !== "function") continue;
    timeline[method] = function (this: unknown, target: unknown, ...rest: unknown[]) {
      return (original as AnyFunction).call(this, scopeTargets(host, target), ...rest);
    };
  }
}

/** A view of window.gsap whose selector strings resolve inside the instance. */
export function scopedGsap(host: Element, gsap: unknown): unknown {
  if (!gsap || (typeof gsap !== "object" && typeof gsap !== "function")) return gsap;
  const real = gsap as Record<string, unknown>;
  const wrapped: Record<string, unknown> = {};
  for (const method of [
    ...TARGET_METHODS,
    "killTweensOf",
    "getTweensOf",
    "quickTo",
    "quickSetter",
  ]) {
    const original = real[method];
    if (typeof original === "function") {
      wrapped[method] = (target: unknown, ...rest: unknown[]) =>
        (original as AnyFunction).call(real, scopeTargets(host, target), ...rest);
    }
  }
  if (typeof real.timeline === "function") {
    const timelineFactory = real.timeline as AnyFunction;
    wrapped.timeline = (...args: unknown[]) => {
      const timeline = timelineFactory.apply(real, args) as Record<string, unknown>;
      if (timeline && typeof timeline === "object") scopeTimeline(host, timeline);
      return timeline;
    };
  }
  const utils = real.utils as Record<string, unknown> | undefined;
  if (utils && typeof utils.toArray === "function") {
    const toArray = utils.toArray as AnyFunction;
    wrapped.utils = new Proxy(utils, {
      get(target, property) {
        if (property === "toArray") {
          return (value: unknown, ...rest: unknown[]) =>
            toArray.call(target, scopeTargets(host, value), ...rest);
        }
        return Reflect.get(target, property, target);
      },
    });
  }
  return new Proxy(real, {
    get(target, property) {
      if (typeof property === "string" && property in wrapped) return wrapped[property];
      return Reflect.get(target, property, target);
    },
  });
}

/** Tag the host so CSS can address exactly this instance; returns the selector for it. */
export function markInstanceHost(host: Element, instanceKey: string): string {
  host.setAttribute("data-svc-instance", instanceKey);
  return `[data-svc-instance="${instanceKey}"]`;
}

/** An @import rule; its URL may hold semicolons (Google Fonts: `wght@300;400`). */
const IMPORT_RULE = /@import\s+(?:url\(\s*(?:"[^"]*"|'[^']*'|[^)]*)\s*\)|"[^"]*"|'[^']*')[^;]*;/g;

/**
 * Rewrite a sub-composition stylesheet so its style rules only reach into the instance:
 * style rules go inside `@scope (host)`, while @keyframes, @font-face, @import and other
 * document-level rules stay global (they are not allowed inside @scope, and are harmless there).
 */
export function scopeStylesheet(
  cssText: string,
  scopeSelector: string,
  authoredRootId?: string,
): string {
  let sheet: CSSStyleSheet;
  try {
    sheet = new CSSStyleSheet();
    // replaceSync refuses @import; keep those lines aside.
    const imports: string[] = [];
    const withoutImports = cssText.replace(IMPORT_RULE, (rule) => {
      imports.push(rule);
      return "";
    });
    sheet.replaceSync(withoutImports);
    const global: string[] = [...imports];
    const scoped: string[] = [];
    for (const rule of Array.from(sheet.cssRules)) {
      if (
        rule instanceof CSSKeyframesRule ||
        rule instanceof CSSFontFaceRule ||
        rule.constructor.name === "CSSPropertyRule" ||
        rule.constructor.name === "CSSLayerStatementRule"
      ) {
        global.push(rule.cssText);
      } else {
        if (rule instanceof CSSStyleRule) rule.selectorText = pageToScope(rule.selectorText);
        if (authoredRootId) rewriteRuleIds(rule, authoredRootId);
        scoped.push(rule.cssText);
      }
    }
    if (scoped.length === 0) return global.join("\n");
    return `${global.join("\n")}\n@scope (${scopeSelector}) {\n${scoped.join("\n")}\n}`;
  } catch {
    return cssText;
  }
}

function rewriteRuleIds(rule: CSSRule, id: string): void {
  if (rule instanceof CSSStyleRule) rule.selectorText = rewriteIdSelector(rule.selectorText, id);
  if ("cssRules" in rule) {
    for (const inner of Array.from((rule as CSSGroupingRule).cssRules)) rewriteRuleIds(inner, id);
  }
}

/** A sub-composition file is also a standalone page: its `html`, `body` and `:root` rules mean
 * "my composition", which inside @scope is `:scope`. */
function pageToScope(selector: string): string {
  return selector.replace(/(^|[\s,>+~(])(?:html|body|:root)(?=$|[\s,>+~.:#[)])/gi, "$1:scope");
}

/**
 * Wrap an inline script body so it runs with the instance's `document`, `gsap` and `svc`.
 * The scope object is handed over through a global read once at the top of the wrapper.
 */
export function wrapInstanceScript(source: string, scopeKey: string, label: string): string {
  const key = JSON.stringify(scopeKey);
  return (
    `(function(__s){(function(document,gsap,svc,__hyperframes){\n${source}\n` +
    `}).call(window,__s.document,__s.gsap,__s.svc,__s.svc);})(window.__svcScopes[${key}]);\n` +
    `//# sourceURL=${label.replace(/\s/g, "_")}`
  );
}
