// `url` projects: the service downloads the zip (or single HTML file) once at submit, through the
// SSRF guard with a size cap and a timeout, and keeps it as an asset of the account, so the rest
// of the pipeline (variables check, worker) only ever deals with assets.
import { UPLOAD_LIMIT_BYTES } from "../../shared/limits";
import type { ServiceContext } from "../context";
import { ApiError } from "../errors";
import { OutboundError, guardedRequest } from "../webhooks/outbound";
import { zipBuffers } from "../../node/index";

const ZIP_MAGIC = [Buffer.from("PK\x03\x04", "latin1"), Buffer.from("PK\x05\x06", "latin1")];

/** Downloads a project and returns zip bytes (a single HTML file is zipped as `composition`). */
export async function fetchUrlProject(
  ctx: ServiceContext,
  url: string,
  composition: string,
): Promise<Buffer> {
  let response;
  try {
    response = await guardedRequest(
      url,
      { allowPrivate: ctx.config.allowPrivateTargets, allowHttpLoopback: true, allowHttp: true },
      { timeoutMs: ctx.config.urlFetchTimeoutMs, maxBytes: UPLOAD_LIMIT_BYTES, maxRedirects: 3 },
    );
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    switch (error.reason) {
      case "too_large":
        throw new ApiError(
          "svc_project_too_large",
          `the project at project.url is larger than ${UPLOAD_LIMIT_BYTES} bytes`,
          "project.url",
        );
      case "invalid_url":
      case "insecure_scheme":
      case "refused_target":
        throw new ApiError(
          "invalid_parameter",
          `project.url refused: ${error.message}`,
          "project.url",
        );
      default:
        throw new ApiError(
          "svc_project_fetch_failed",
          `could not download project.url: ${error.message}`,
          "project.url",
        );
    }
  }
  if (response.status < 200 || response.status >= 300) {
    throw new ApiError(
      "svc_project_fetch_failed",
      `project.url answered HTTP ${response.status}`,
      "project.url",
    );
  }
  const body = response.body;
  if (ZIP_MAGIC.some((magic) => body.subarray(0, 4).equals(magic))) return body;
  const contentType = String(response.headers["content-type"] ?? "");
  const text = body.subarray(0, 512).toString("utf8").trimStart().toLowerCase();
  if (contentType.includes("html") || text.startsWith("<"))
    return zipBuffers([{ name: composition, data: body }]);
  throw new ApiError(
    "svc_project_invalid",
    "project.url is neither a zip archive nor an HTML file",
    "project.url",
  );
}
