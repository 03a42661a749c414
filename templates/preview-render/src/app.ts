// The HTTP app: the preview page and its files, the compositions' files and schemas, the render
// endpoint in the shape RENDER_MODE picks, and the stored videos (with Range, so browsers seek).
//   GET  /                       preview page (<svc-player>, variables form, Render)
//   GET  /libs/cdn/<host>/<path>  the CDN files the compositions load (libraries.ts), for the preview
//   GET  /api/compositions       {compositions: [name], default}
//   GET  /api/compositions/:name {name, width, height, duration, fps, variables, schema_errors}
//   POST /api/render             async: 202 {call_id}; sync: 200 {call_id, status: "done", url}
//   GET  /api/render/:id         202 {status: "running", progress} | 200 {status: "done", url}
//                                | 200 {status: "failed", error: {code, message}} | 404
//   GET  /renders/:name          the video (Range), or a redirect to it in the object store
//   GET  /healthz                {status: "ok"}
// With RENDER_API_TOKEN set, POST /api/render needs `Authorization: Bearer <token>` (401
// otherwise); everything else, the preview page included, stays public. A render's status is
// found only by its unguessable call_id. On a loopback HOST a request naming another Host is
// refused (403: DNS rebinding). File routes answer Range, malformed Ranges and paths or symlinks
// leaving their folder as svc's own file servers do (svc/node). No answer may be framed by another
// site (CSP frame-ancestors 'none', X-Frame-Options DENY: a page that frames the preview could
// trick a visitor into clicking Render); the CSP stops plugins and foreign form targets too, and
// leaves scripts alone, because the preview's frame (a srcdoc document) inherits the page's
// policy and runs the composition's own inline scripts.
import { createHash, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { libraryResponse, playerModule } from "svc/player-assets";
import { isLoopbackHostHeader, rangeAnswer } from "svc/node";
import { contentTypeFor } from "svc/shared";
import type { CompositionLibrary } from "./compositions";
import type { RenderMode } from "./config";
import { TemplateError } from "./errors";
import type { JobResult, RenderJobs } from "./jobs";
import { PageLibraries } from "./libraries";
import { parseRenderRequest } from "./request";
import type { RenderStore } from "./storage";

/** Every answer's policy: not framed by any site, no plugins, forms post only here. */
const PAGE_POLICY = "frame-ancestors 'none'; object-src 'none'; form-action 'self'";

const PUBLIC_DIR = fileURLToPath(new URL("../public/", import.meta.url));
/** The page's own files; nothing else under public/ is served. */
const PAGE_FILES: Record<string, string> = {
  "/": "index.html",
  "/app.js": "app.js",
  "/app.css": "app.css",
};

export interface AppOptions {
  compositions: CompositionLibrary;
  jobs: RenderJobs;
  store: RenderStore;
  renderMode: RenderMode;
  maxBodyBytes: number;
  /** "sandbox" or "service", for /healthz. */
  renderer: string;
  /** The token POST /api/render requires; undefined: none. */
  renderToken?: string | undefined;
  /** Origins image variables may point at (config.ts); "*" for any. */
  allowedOrigins: readonly string[] | "*";
  /**
   * HOST is a loopback address: requests naming any other Host are refused (403), as svc's own
   * loopback servers refuse them — a web site's name rebound to 127.0.0.1 reaches nothing here.
   */
  loopbackOnly?: boolean | undefined;
}

/** Refuses the request unless it carries the render token (compared in constant time). */
function checkRenderToken(expected: string, authorization: string | undefined): void {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (!presented) {
    throw new TemplateError(
      "authentication_required",
      'This server renders only for callers with its token: send "Authorization: Bearer <RENDER_API_TOKEN>".',
      { headers: { "www-authenticate": 'Bearer realm="render"' } },
    );
  }
  const digest = (text: string) => createHash("sha256").update(text).digest();
  if (!timingSafeEqual(digest(presented), digest(expected))) {
    throw new TemplateError(
      "invalid_token",
      "The token is not this server's RENDER_API_TOKEN; check the value you send.",
      { headers: { "www-authenticate": 'Bearer realm="render", error="invalid_token"' } },
    );
  }
}

export function buildApp(options: AppOptions): FastifyInstance {
  const { compositions, jobs, store } = options;
  const app = Fastify({
    logger: { level: process.env.LOG_LEVEL?.trim() || "warn" },
    bodyLimit: options.maxBodyBytes,
    forceCloseConnections: true,
  });

  app.setErrorHandler((error, request, reply) => {
    const failure = toTemplateError(error, options.maxBodyBytes);
    if (failure.code === "internal_error") request.log.error({ err: error }, "request failed");
    for (const [name, value] of Object.entries(failure.extra.headers ?? {}))
      reply.header(name, value);
    return reply.code(failure.status).send(failure.toJSON());
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(
        new TemplateError(
          "not_found",
          `Nothing at ${request.method} ${request.url.split("?")[0]}.`,
        ).toJSON(),
      ),
  );
  if (options.loopbackOnly) {
    app.addHook("onRequest", async (request) => {
      if (!isLoopbackHostHeader(request.headers.host, request.raw.socket.localPort ?? 0)) {
        throw new TemplateError(
          "host_not_allowed",
          "This server listens on this machine only (HOST is a loopback address): open it as 127.0.0.1 or localhost, or set HOST to serve other names.",
        );
      }
    });
  }
  app.addHook("onSend", async (_request, reply) => {
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "no-referrer");
    reply.header("content-security-policy", PAGE_POLICY);
    reply.header("x-frame-options", "DENY");
  });
  const libraries = new PageLibraries(compositions);

  app.get("/healthz", async () => ({
    status: "ok",
    renderer: options.renderer,
    mode: options.renderMode,
  }));

  for (const [route, file] of Object.entries(PAGE_FILES)) {
    app.get(route, async (_request, reply) =>
      reply
        .type(contentTypeFor(file))
        .header("cache-control", "no-cache")
        .send(await readFile(PUBLIC_DIR + file)),
    );
  }
  app.get("/svc-player.js", async (_request, reply) =>
    reply
      .type(contentTypeFor("svc-player.js"))
      .header("cache-control", "no-cache")
      .send(await playerModule()),
  );
  // The CDN files svc has copies of (GSAP, npm files, Google Fonts), for the preview
  // (<svc-player library-base="/libs">), from the copies renders use; the preview's frame has an
  // opaque origin, so fonts need CORS. A CDN URL svc has no copy of is redirected to the CDN.
  app.get<{ Params: { "*": string } }>("/libs/cdn/*", async (request, reply) => {
    const query = request.url.indexOf("?");
    const rest = request.params["*"] + (query >= 0 ? request.url.slice(query) : "");
    // Only the files the compositions load: checked before any file is read or fetched.
    const answer = await libraryResponse(rest, "/libs", (url) => libraries.allows(url));
    if (!answer) {
      throw new TemplateError(
        "not_found",
        `No library file ${request.url.split("?")[0]}: the preview serves the library files its compositions load, nothing else.`,
      );
    }
    reply.header("access-control-allow-origin", "*");
    if ("redirect" in answer) return reply.code(302).header("location", answer.redirect).send();
    return reply
      .type(answer.contentType)
      .header("cache-control", "public, max-age=86400")
      .send(answer.body);
  });

  app.get<{ Params: { name: string; "*": string } }>(
    "/compositions/:name/*",
    async (request, reply) => {
      const path = await compositions.file(
        request.params.name,
        request.params["*"] || "index.html",
      );
      if (!path) throw new TemplateError("not_found", `No file ${request.url.split("?")[0]}.`);
      const { size } = await stat(path);
      reply.type(contentTypeFor(path)).header("cache-control", "no-cache").header("vary", "origin");
      // The preview's frame is a sandboxed srcdoc document (an opaque origin, "null"): the runtime
      // fetches sub-composition files and fonts with CORS, so that origin may read these files,
      // which are public anyway (the page links them). No other origin is granted.
      if (request.headers.origin === "null") reply.header("access-control-allow-origin", "null");
      return sendBytes(reply, request.headers.range, size, (range) =>
        createReadStream(path, range),
      );
    },
  );

  app.get("/api/compositions", async () => ({
    compositions: await compositions.list(),
    default: (await compositions.defaultComposition()) ?? null,
    render_token_required: options.renderToken !== undefined,
  }));
  app.get<{ Params: { name: string } }>("/api/compositions/:name", async (request) => {
    const composition = await compositions.get(request.params.name);
    return {
      name: composition.name,
      url: `/compositions/${composition.name}/index.html`,
      width: composition.width,
      height: composition.height,
      duration: composition.duration ?? null,
      fps: composition.fpsHint ?? null,
      variables: composition.variables,
      schema_errors: composition.schemaErrors,
    };
  });

  app.post("/api/render", async (request, reply) => {
    if (options.renderToken) checkRenderToken(options.renderToken, request.headers.authorization);
    const spec = await parseRenderRequest(request.body, compositions, options.allowedOrigins);
    const { id, finished } = jobs.start(spec);
    request.log.info({ call_id: id, composition: spec.composition.name }, "render started");
    if (options.renderMode === "async") {
      return reply.code(202).header("location", `/api/render/${id}`).send({ call_id: id });
    }
    const result = await finished;
    return reply.code(syncStatus(result)).send(result);
  });

  app.get<{ Params: { id: string } }>("/api/render/:id", async (request, reply) => {
    const result = await jobs.get(request.params.id);
    if (!result) {
      throw new TemplateError(
        "render_not_found",
        `There is no render ${JSON.stringify(request.params.id.slice(0, 80))}. Use the call_id that POST /api/render answered.`,
      );
    }
    return reply.code(result.status === "running" ? 202 : 200).send(result);
  });

  const sendVideo = async (name: string, rangeHeader: string | undefined, reply: FastifyReply) => {
    const video = await store.get(name);
    if (!video)
      throw new TemplateError(
        "not_found",
        `There is no video ${JSON.stringify(name.slice(0, 80))}.`,
      );
    if ("url" in video) {
      // The object store serves the bytes (and Range) itself; the URL expires, so never cache this.
      return reply
        .code(302)
        .header("location", video.url)
        .header("cache-control", "no-store")
        .send();
    }
    reply
      .type(contentTypeFor(name))
      // Names are unique per render and a stored video never changes.
      .header("cache-control", "public, max-age=31536000, immutable");
    return sendBytes(reply, rangeHeader, video.size, (range) => video.open(range));
  };
  app.get<{ Params: { name: string } }>("/renders/:name", (request, reply) =>
    sendVideo(request.params.name, request.headers.range, reply),
  );
  return app;
}

/**
 * Sends `size` bytes, or the part a Range header asks for, as svc's own file servers do
 * (`rangeAnswer` from svc/node: a malformed Range is ignored, a range past the end answers 416).
 */
function sendBytes(
  reply: FastifyReply,
  rangeHeader: string | undefined,
  size: number,
  open: (range: { start: number; end: number }) => Readable,
): FastifyReply {
  const answer = rangeAnswer(rangeHeader, size);
  reply.code(answer.status).headers(answer.headers);
  if (answer.status === 416) return reply.send();
  // HEAD: fastify answers with these headers and drops the body.
  if (size === 0) return reply.send();
  return reply.send(open({ start: answer.start, end: answer.end }));
}

/** A sync POST's status: the video, or why there is none. */
function syncStatus(result: JobResult): number {
  if (result.status === "done") return 200;
  if (result.status === "failed" && result.error.code === "render_timeout") return 504;
  return 500;
}

function toTemplateError(error: unknown, maxBodyBytes: number): TemplateError {
  if (error instanceof TemplateError) return error;
  const { statusCode, code, message } = error as {
    statusCode?: number;
    code?: string;
    message?: string;
  };
  if (statusCode === 413) {
    return new TemplateError(
      "body_too_large",
      `The body is larger than ${maxBodyBytes} bytes (MAX_BODY_BYTES); send fewer or shorter variables.`,
    );
  }
  if (statusCode === 415) {
    return new TemplateError(
      "unsupported_media_type",
      "Send the body as JSON, with content-type: application/json.",
    );
  }
  if (
    code === "FST_ERR_CTP_INVALID_JSON_BODY" ||
    code === "FST_ERR_CTP_EMPTY_JSON_BODY" ||
    error instanceof SyntaxError
  ) {
    return new TemplateError(
      "invalid_json",
      `The body is not valid JSON (${message ?? "parse error"}).`,
    );
  }
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    return new TemplateError("invalid_parameter", message ?? "The request is not valid.");
  }
  return new TemplateError("internal_error", "The server hit an internal error; see its log.");
}
