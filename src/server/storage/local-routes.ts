// HTTP face of the local object store: PUT and GET on signed URLs (no API key; the signature is
// the credential). Uploads are capped at the size signed into the URL; downloads honour Range.
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Readable } from "node:stream";
import { ApiError } from "../errors";
import type { LocalObjectStore } from "./local-store";
import { contentTypeOf, ObjectTooLargeError } from "./object-store";
import { parseByteRange } from "../../shared/byte-range";

type SignedQuery = { exp?: string; size?: string; sig?: string };

export function registerStorageRoutes(app: FastifyInstance, store: LocalObjectStore): void {
  void app.register(async (scope) => {
    // Raw bodies: the upload handler streams the request itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null));

    scope.put<{ Params: { "*": string }; Querystring: SignedQuery }>(
      "/storage/*",
      async (request, reply) => {
        const key = request.params["*"];
        const { check, maxBytes } = store.verify("put", key, request.query);
        refuseUnlessSigned(check);
        if (!key.startsWith("uploads/"))
          throw new ApiError("forbidden", "this URL does not allow uploads");
        const declared = Number(request.headers["content-length"]);
        if (Number.isFinite(declared) && declared > maxBytes) {
          throw new ApiError(
            "svc_project_too_large",
            `the upload is ${declared} bytes; this URL allows ${maxBytes}`,
          );
        }
        try {
          const { size } = await store.put(key, request.raw as Readable, { maxBytes });
          return reply.code(200).send({ data: { size_bytes: size } });
        } catch (error) {
          if (error instanceof ObjectTooLargeError) {
            reply.header("connection", "close");
            throw new ApiError(
              "svc_project_too_large",
              `the upload is larger than the ${maxBytes} bytes this URL allows`,
            );
          }
          throw error;
        }
      },
    );

    scope.get<{ Params: { "*": string }; Querystring: SignedQuery }>(
      "/storage/*",
      async (request, reply) => {
        const key = request.params["*"];
        refuseUnlessSigned(store.verify("get", key, request.query).check);
        const info = await store.stat(key);
        if (!info)
          throw new ApiError("not_found", "the object does not exist (it may have been deleted)");
        reply.header("content-type", contentTypeOf(key));
        // Customers' bytes: never sniffed into HTML or script by a browser that opens the URL.
        reply.header("x-content-type-options", "nosniff");
        reply.header("accept-ranges", "bytes");
        reply.header("cache-control", "private, max-age=0");
        const range = parseRange(request.headers.range, info.size);
        if (range === "unsatisfiable") {
          reply.header("content-range", `bytes */${info.size}`);
          throw new ApiError(
            "range_not_satisfiable",
            `the requested range is outside the ${info.size}-byte object`,
          );
        }
        const object = await store.get(key, range ?? undefined);
        if (!object) throw new ApiError("not_found", "the object does not exist");
        return sendObject(reply, object.stream, info.size, range);
      },
    );
  });
}

function refuseUnlessSigned(check: "ok" | "expired" | "invalid"): void {
  if (check === "expired")
    throw new ApiError("forbidden", "this signed URL has expired; request a fresh one");
  if (check === "invalid") throw new ApiError("forbidden", "the URL signature is invalid");
}

function sendObject(
  reply: FastifyReply,
  stream: Readable,
  size: number,
  range: { start: number; end: number } | null,
) {
  if (range) {
    reply.code(206);
    reply.header("content-range", `bytes ${range.start}-${range.end}/${size}`);
    reply.header("content-length", String(range.end - range.start + 1));
  } else {
    reply.header("content-length", String(size));
  }
  return reply.send(stream);
}

/** Parses a single-range `Range` header (the shared parser). null = whole object. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | "unsatisfiable" {
  return parseByteRange(header, size) ?? null;
}
