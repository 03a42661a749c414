// Shader transitions of `@hyperframes/shader-transitions` (HyperShader), drawn as the reference
// renderer draws them (bench/README.md "Shader transitions"). With `__HF_VIRTUAL_TIME__` the
// library only flips its scenes' opacity and leaves the shader to the renderer. The reference
// (0.8.170, MP4 output) turns on the library's page-side compositor: at a time inside a
// transition window the library draws a copy of the outgoing and of the incoming scene, each at
// full opacity over its `bgColor`, into canvases (`drawElementImage`, a Chromium experiment),
// blends them with the transition's own WebGL shader in a canvas of the composition's size over
// the whole page, and the engine screenshots the page.
//
// svc turns on the same compositor, and stands in for the experiment with the engine: at a frame
// inside a window the engine (capture/shader-frames.ts) shows each scene alone as the copy would
// be drawn, screenshots it, and hands both pictures back; `drawElementImage` draws the picture of
// the scene a copy was made from. So every shader of the library is drawn by its own GLSL and
// uniforms. Should its compositor not be in place (a library version without it), the blend is
// drawn here, by a shader of the same arithmetic (domain-warp; a crossfade for the others).
// Pages that do not load the library pay one property trap, nothing more.
//
// The library records its transitions on `window.__hf.transitions` only when `window.__hf`
// exists when `init` runs (the reference's runtime defines it); svc's does not, so `__hf` is
// created the moment the library's global is assigned, before any page code can call `init`,
// and `init`'s colours (bgColor, accentColor) are kept for the scenes' background and the blend.
declare global {
  interface Window {
    __hf?: { transitions?: ShaderTransition[] };
    __svcShaderTransitions?: ShaderTransitionsPage;
  }
}

/** One entry of `window.__hf.transitions`, as the library writes it. */
export interface ShaderTransition {
  time: number;
  duration: number;
  /** Undefined for a CSS crossfade, which the library's own timeline draws. */
  shader?: string;
  fromScene: string;
  toScene: string;
}

export interface ShaderTransitionsPage {
  /** The page's transitions (empty when it does not use the library). */
  list(): ShaderTransition[];
  /** Shows only the scene `id`, at full opacity over the page's bgColor; null: restore. */
  isolate(id: string | null): void;
  /** Draws the blend of two PNG screenshots (base64) over the page; resolves when drawn. */
  composite(
    from: string,
    to: string,
    transition: { frameTime: number; fromScene: string; toScene: string; shader: string },
    progress: number,
  ): Promise<void>;
  /** Removes the blended picture. */
  clear(): void;
}

interface InitConfig {
  bgColor?: string;
  accentColor?: string;
}

const OVERLAY_ID = "__svc-shader-transition";
const MASK_STYLE_ID = "__svc-shader-mask";
const SAVED_ATTR = "data-svc-shader-saved";
/** The library's compositor canvas (its PAGE_COMPOSITOR_CANVAS_ID). */
const LIBRARY_CANVAS_ID = "__hf-page-side-compositor";

let initConfig: InitConfig = {};

export function installShaderTransitions(): void {
  trapLibraryGlobal();
  window.__svcShaderTransitions = {
    list: () => (Array.isArray(window.__hf?.transitions) ? window.__hf!.transitions! : []),
    isolate,
    composite,
    clear: () => {
      const overlay = document.getElementById(OVERLAY_ID);
      if (overlay) overlay.style.setProperty("display", "none", "important");
      // What the library's seek wrapper does at a time outside every window.
      const library = document.getElementById(LIBRARY_CANVAS_ID);
      if (library) library.style.display = "none";
    },
  };
}

/** Creates `window.__hf` as the library's global is assigned, and keeps `init`'s colours. */
function trapLibraryGlobal(): void {
  let value: unknown;
  try {
    Object.defineProperty(window, "HyperShader", {
      configurable: true,
      enumerable: true,
      get: () => value,
      set: (next: unknown) => {
        value = next;
        if (!next || typeof next !== "object") return;
        enableLibraryCompositor();
        const library = next as Record<string, unknown>;
        const init = library.init;
        if (typeof init !== "function") return;
        // The library's exports are getters; a copy with `init` wrapped stands in for it.
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(library)) copy[key] = library[key];
        copy.init = function (this: unknown, config: InitConfig, ...rest: unknown[]) {
          initConfig = config && typeof config === "object" ? config : {};
          return (init as (...args: unknown[]) => unknown).call(this, config, ...rest);
        };
        value = copy;
      },
    });
  } catch {
    // A page that defined HyperShader itself first keeps it; nothing to record then.
  }
}

/** Scene pictures the engine screenshotted, by scene id, for the library's compositor. */
const scenePictures = new Map<string, ImageBitmap>();

/** The library's page-side compositor's hooks (its engineModePageComposite). */
interface CompositorWindow {
  __hf?: { seek?: (time: number) => unknown };
  __HF_PAGE_SIDE_COMPOSITING__?: boolean;
  __hf_page_composite_pending?: boolean;
  __hf_page_composite_prepare?: () => Promise<boolean>;
  __hf_page_composite_resolve?: () => boolean;
}

/**
 * Lets the library install its own page-side compositor, as the reference's producer does, so
 * every shader of its registry is drawn by its own GLSL and uniforms. It needs three things:
 * - `__HF_PAGE_SIDE_COMPOSITING__` before `init`;
 * - `window.__hf.seek`, which it wraps to learn each frame's time: here a function that only names
 *   the time (svc's own seek has moved the page already), called by `composite`;
 * - html-in-canvas (`layoutsubtree` canvases, `drawElementImage`), a Chromium experiment svc does
 *   not turn on: it draws each scene's copy from its canvas. Stood in for by drawing the
 *   engine's screenshot of that scene alone, found by the copy's id (a copy keeps its scene's id),
 *   which is what `drawElementImage` draws. Defined only once the library has loaded.
 */
function enableLibraryCompositor(): void {
  const win = window as unknown as CompositorWindow;
  win.__hf ??= {};
  if (typeof win.__hf.seek !== "function") win.__hf.seek = () => undefined;
  win.__HF_PAGE_SIDE_COMPOSITING__ = true;
  if (!("layoutSubtree" in HTMLCanvasElement.prototype)) {
    Object.defineProperty(HTMLCanvasElement.prototype, "layoutSubtree", {
      configurable: true,
      get(this: HTMLCanvasElement) {
        return this.hasAttribute("layoutsubtree");
      },
    });
  }
  const context = CanvasRenderingContext2D.prototype as unknown as Record<string, unknown>;
  if (typeof context.drawElementImage !== "function") {
    context.drawElementImage = function (
      this: CanvasRenderingContext2D,
      element: Element,
      x: number,
      y: number,
      width: number,
      height: number,
    ) {
      const picture = scenePictures.get(element.id);
      if (!picture) throw new Error(`svc: no picture of scene "${element.id}" for this frame`);
      this.drawImage(picture, x, y, width, height);
    };
  }
}

/**
 * Draws the frame at `time` with the library's compositor when it installed itself (its seek
 * wrapper is in place and says the time is in a transition); false when it cannot.
 */
async function libraryComposite(
  time: number,
  from: { id: string; picture: ImageBitmap },
  to: { id: string; picture: ImageBitmap },
): Promise<boolean> {
  const win = window as unknown as CompositorWindow;
  const prepare = win.__hf_page_composite_prepare;
  const resolve = win.__hf_page_composite_resolve;
  if (typeof prepare !== "function" || typeof resolve !== "function") return false;
  win.__hf?.seek?.(time);
  if (!win.__hf_page_composite_pending) return false;
  scenePictures.set(from.id, from.picture);
  scenePictures.set(to.id, to.picture);
  try {
    if (!(await prepare())) return false;
    return resolve();
  } finally {
    scenePictures.clear();
  }
}

/** Sets an inline style with priority, remembering the element's own value once. */
function force(node: HTMLElement, property: string, value: string): void {
  const saved = JSON.parse(node.getAttribute(SAVED_ATTR) ?? "{}") as Record<
    string,
    [string, string]
  >;
  if (!(property in saved)) {
    saved[property] = [
      node.style.getPropertyValue(property),
      node.style.getPropertyPriority(property),
    ];
    node.setAttribute(SAVED_ATTR, JSON.stringify(saved));
  }
  node.style.setProperty(property, value, "important");
}

function restoreAll(): void {
  for (const node of Array.from(document.querySelectorAll<HTMLElement>(`[${SAVED_ATTR}]`))) {
    const saved = JSON.parse(node.getAttribute(SAVED_ATTR)!) as Record<string, [string, string]>;
    for (const [property, [value, priority]] of Object.entries(saved)) {
      if (value) node.style.setProperty(property, value, priority);
      else node.style.removeProperty(property);
    }
    node.removeAttribute(SAVED_ATTR);
  }
  document.getElementById(MASK_STYLE_ID)?.remove();
}

/**
 * The reference draws a copy of the scene with `opacity: 1` and `visibility: visible` on the
 * scene and on its `[data-start]` descendants, over a canvas filled with `bgColor`: here the
 * other elements of the composition are hidden and the page's background is that colour.
 */
function isolate(id: string | null): void {
  restoreAll();
  if (id === null) return;
  const scene = document.getElementById(id);
  if (!scene) return;
  for (const node of Array.from(document.body.querySelectorAll<HTMLElement>("*"))) {
    if (node === scene || scene.contains(node) || node.contains(scene)) continue;
    if (node.id === OVERLAY_ID) continue;
    if (node.parentElement && !node.parentElement.contains(scene)) continue; // hidden with its parent
    force(node, "visibility", "hidden");
  }
  force(scene, "opacity", "1");
  force(scene, "visibility", "visible");
  for (const node of Array.from(scene.querySelectorAll<HTMLElement>("[data-start]"))) {
    force(node, "opacity", "1");
    force(node, "visibility", "visible");
  }
  const style = document.createElement("style");
  style.id = MASK_STYLE_ID;
  const background = CSS.supports("color", initConfig.bgColor ?? "") ? initConfig.bgColor! : "#000";
  style.textContent =
    `html, body { background: ${background} !important; } ` +
    "[data-composition-id] { background: transparent !important; }";
  document.head.append(style);
}

async function bitmap(png: string): Promise<ImageBitmap> {
  const blob = await (await fetch(`data:image/png;base64,${png}`)).blob();
  return createImageBitmap(blob, { colorSpaceConversion: "none", premultiplyAlpha: "none" });
}

interface Blender {
  canvas: HTMLCanvasElement;
  gl: WebGLRenderingContext;
  programs: Map<string, WebGLProgram>;
  from: WebGLTexture;
  to: WebGLTexture;
}

let blender: Blender | undefined;

/** The composition's size, which the reference's shader canvas has (1920x1080 without one). */
function compositionSize(): { width: number; height: number } {
  const root = document.querySelector("[data-composition-id]");
  const read = (name: string, fallback: number) => {
    const value = Number(root?.getAttribute(name));
    return Number.isFinite(value) && value > 0 ? value : fallback;
  };
  return { width: read("data-width", 1920), height: read("data-height", 1080) };
}

function texture(gl: WebGLRenderingContext): WebGLTexture {
  const tex = gl.createTexture()!;
  gl.bindTexture(gl.TEXTURE_2D, tex);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
  return tex;
}

function makeBlender(): Blender {
  const { width, height } = compositionSize();
  const canvas = document.createElement("canvas");
  canvas.id = OVERLAY_ID;
  canvas.width = width;
  canvas.height = height;
  (document.body ?? document.documentElement).append(canvas);
  const gl = canvas.getContext("webgl", { preserveDrawingBuffer: true });
  if (!gl) throw new Error("svc: WebGL is not available to draw a shader transition");
  gl.viewport(0, 0, width, height);
  gl.pixelStorei(gl.UNPACK_FLIP_Y_WEBGL, false);
  const quad = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, quad);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
  return { canvas, gl, programs: new Map(), from: texture(gl), to: texture(gl) };
}

function program(gl: WebGLRenderingContext, fragment: string): WebGLProgram {
  const compile = (type: number, source: string) => {
    const shader = gl.createShader(type)!;
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) {
      throw new Error(`svc: a transition shader did not compile: ${gl.getShaderInfoLog(shader)}`);
    }
    return shader;
  };
  const linked = gl.createProgram()!;
  gl.attachShader(linked, compile(gl.VERTEX_SHADER, VERTEX));
  gl.attachShader(linked, compile(gl.FRAGMENT_SHADER, fragment));
  gl.linkProgram(linked);
  if (!gl.getProgramParameter(linked, gl.LINK_STATUS)) {
    throw new Error(`svc: a transition shader did not link: ${gl.getProgramInfoLog(linked)}`);
  }
  return linked;
}

/** The library's accent colours from `accentColor` (its default without one). */
function accentColors(): { accent: number[]; dark: number[]; bright: number[] } {
  const hex = (initConfig.accentColor ?? "").replace("#", "");
  if (!initConfig.accentColor) {
    return { accent: [1, 0.6, 0.2], dark: [0.4, 0.15, 0], bright: [1, 0.85, 0.5] };
  }
  let rgb = [0, 2, 4].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255);
  if (hex.length < 6 || rgb.some(Number.isNaN)) rgb = [0.5, 0.5, 0.5];
  return {
    accent: rgb,
    dark: rgb.map((c) => c * 0.35),
    bright: rgb.map((c) => Math.min(1, c * 1.5 + 0.2)),
  };
}

async function composite(
  fromPng: string,
  toPng: string,
  transition: { frameTime: number; fromScene: string; toScene: string; shader: string },
  progress: number,
): Promise<void> {
  const [fromImage, toImage] = await Promise.all([bitmap(fromPng), bitmap(toPng)]);
  const { shader } = transition;
  const drawn = await libraryComposite(
    transition.frameTime,
    { id: transition.fromScene, picture: fromImage },
    { id: transition.toScene, picture: toImage },
  );
  if (drawn) {
    fromImage.close();
    toImage.close();
    return;
  }
  blender ??= makeBlender();
  const { canvas, gl, programs } = blender;
  const fragment = FRAGMENTS[shader] ?? FRAGMENTS.crossfade!;
  let linked = programs.get(shader);
  if (!linked) {
    linked = program(gl, fragment);
    programs.set(shader, linked);
  }
  gl.bindTexture(gl.TEXTURE_2D, blender.from);
  gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, fromImage);
  gl.bindTexture(gl.TEXTURE_2D, blender.to);
  gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, toImage);
  fromImage.close();
  toImage.close();
  gl.useProgram(linked);
  const at = (name: string) => gl.getUniformLocation(linked, name);
  gl.activeTexture(gl.TEXTURE0);
  gl.bindTexture(gl.TEXTURE_2D, blender.from);
  gl.uniform1i(at("u_from"), 0);
  gl.activeTexture(gl.TEXTURE1);
  gl.bindTexture(gl.TEXTURE_2D, blender.to);
  gl.uniform1i(at("u_to"), 1);
  gl.uniform1f(at("u_progress"), progress);
  gl.uniform2f(at("u_resolution"), canvas.width, canvas.height);
  const colors = accentColors();
  gl.uniform3f(at("u_accent"), colors.accent[0]!, colors.accent[1]!, colors.accent[2]!);
  gl.uniform3f(at("u_accent_dark"), colors.dark[0]!, colors.dark[1]!, colors.dark[2]!);
  gl.uniform3f(at("u_accent_bright"), colors.bright[0]!, colors.bright[1]!, colors.bright[2]!);
  const position = gl.getAttribLocation(linked, "a_pos");
  gl.enableVertexAttribArray(position);
  gl.vertexAttribPointer(position, 2, gl.FLOAT, false, 0, 0);
  gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
  canvas.style.cssText =
    "position: fixed !important; left: 0 !important; top: 0 !important; margin: 0 !important; " +
    "width: 100% !important; height: 100% !important; z-index: 2147483647 !important; " +
    "pointer-events: none !important; transform: none !important; opacity: 1 !important; " +
    "visibility: visible !important; display: block !important;";
}

// The shaders, in the library's conventions (its `shaders/common.ts`): medium precision, uv from
// the top left, the same uniforms. The arithmetic is the library's, operation for operation,
// because its noise (`fract(sin(..) * 43758.5453)` in 32-bit floats) turns any reordering into a
// different picture.
const VERTEX =
  "attribute vec2 a_pos; varying vec2 v_uv;\n" +
  "void main() { v_uv = a_pos * 0.5 + 0.5; v_uv.y = 1.0 - v_uv.y; gl_Position = vec4(a_pos, 0, 1); }";

const HEADER = `precision mediump float;
varying vec2 v_uv;
uniform sampler2D u_from, u_to;
uniform float u_progress;
uniform vec2 u_resolution;
uniform vec3 u_accent;
uniform vec3 u_accent_dark;
uniform vec3 u_accent_bright;
`;

const NOISE = `
float hash(vec2 p) { return fract(sin(dot(p, vec2(127.1, 311.7))) * 43758.5453); }
float vnoise(vec2 p) {
  vec2 i = floor(p), f = fract(p);
  f = f * f * f * (f * (f * 6. - 15.) + 10.);
  return mix(mix(hash(i), hash(i + vec2(1, 0)), f.x), mix(hash(i + vec2(0, 1)), hash(i + vec2(1, 1)), f.x), f.y);
}
float fbm(vec2 p) {
  float v = 0., a = .5;
  mat2 R = mat2(.8, .6, -.6, .8);
  for (int i = 0; i < 5; i++) { v += a * vnoise(p); p = R * p * 2.02; a *= .5; }
  return v;
}
`;

const FRAGMENTS: Record<string, string> = {
  crossfade:
    HEADER +
    "void main() { gl_FragColor = mix(texture2D(u_from, v_uv), texture2D(u_to, v_uv), u_progress); }",
  "domain-warp":
    HEADER +
    NOISE +
    `void main() {
  vec2 q = vec2(fbm(v_uv * 3.), fbm(v_uv * 3. + vec2(5.2, 1.3)));
  vec2 r = vec2(fbm(v_uv * 3. + q * 4. + vec2(1.7, 9.2)), fbm(v_uv * 3. + q * 4. + vec2(8.3, 2.8)));
  float n = fbm(v_uv * 3. + r * 2.);
  vec2 warpDir = (q - .5) * .4;
  vec4 A = texture2D(u_from, clamp(v_uv + warpDir * u_progress, 0., 1.));
  vec4 B = texture2D(u_to, clamp(v_uv - warpDir * (1. - u_progress), 0., 1.));
  float e = smoothstep(u_progress - .08, u_progress + .08, n);
  float ed = abs(n - u_progress);
  float em = smoothstep(.1, 0., ed) * (1. - step(1., u_progress));
  vec3 ec = mix(u_accent_dark, u_accent_bright, smoothstep(0., .1, ed));
  gl_FragColor = vec4(mix(B, A, e).rgb + ec * em * 2., 1.);
}`,
};
