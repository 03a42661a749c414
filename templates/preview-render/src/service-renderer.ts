// Renders on an svc render service (SVC_API_URL + SVC_API_KEY) the template way: each
// composition is zipped and uploaded once, and every render — whatever its variables — reuses
// that asset, so a request costs one small JSON call instead of an upload. An edited composition
// (a file added, removed, resized or touched) is published again on its next render. The video
// is polled for, downloaded to the job's work folder (temp file + rename) and stored like a local
// render. At the time limit the render is deleted on the service and the job fails.
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  ApiClient,
  buildRenderRequest,
  ClientError,
  finishRender,
  newIdempotencyKey,
  publishProject,
} from "svc/core";
import { ENTRY_FILE, type Composition } from "./compositions";
import { RenderFailure, type RenderOutcome, type Renderer, type RenderRun } from "./jobs";
import type { RenderSpec } from "./request";

const CLIENT_NAME = "svc-preview-render";

export class ServiceRenderer implements Renderer {
  private readonly client: ApiClient;
  /** Per composition: the fingerprint of its files and the asset they were published as. */
  private readonly assets = new Map<string, { fingerprint: string; assetId: Promise<string> }>();

  constructor(
    private readonly service: { url: string; apiKey: string; pollIntervalSeconds: number },
  ) {
    this.client = new ApiClient({
      baseUrl: service.url,
      credential: service.apiKey,
      userAgent: CLIENT_NAME,
    });
  }

  async render(spec: RenderSpec, run: RenderRun): Promise<RenderOutcome> {
    let renderId: string | undefined;
    try {
      const assetId = await this.asset(spec.composition);
      const submitted = await this.client.submitRender(
        buildRenderRequest(
          { type: "asset_id", asset_id: assetId },
          {
            composition: ENTRY_FILE,
            variables: spec.variables,
            strictVariables: true,
            ...spec.settings,
          },
          undefined,
        ),
        newIdempotencyKey(CLIENT_NAME),
        run.signal,
      );
      renderId = submitted.render_id;
      await finishRender(this.client, renderId, {
        pollIntervalMs: this.service.pollIntervalSeconds * 1000,
        // The job's time limit ends the wait; the poller's own limit must not come first.
        maxWaitMs: 24 * 3600 * 1000,
        signal: run.signal,
        outputPath: () => run.output,
        onEvent: (event) => {
          if (event.type === "render-status") run.onProgress({ progress: event.record.progress });
        },
      });
      // The service applies its own network policy and keeps its warnings with the render.
      return { warnings: [] };
    } catch (error) {
      if (run.signal.aborted) {
        if (renderId) await this.client.deleteRender(renderId).catch(() => undefined);
        throw run.signal.reason;
      }
      if (error instanceof ClientError) throw new RenderFailure(error.code, error.message);
      throw error;
    }
  }

  /** The composition's asset, published on first use and again after its files change. */
  private async asset(composition: Composition): Promise<string> {
    const fingerprint = await folderFingerprint(composition.dir);
    const known = this.assets.get(composition.name);
    if (known?.fingerprint === fingerprint) return known.assetId;
    // Not tied to one request's signal: concurrent renders of the composition share this upload.
    const assetId = publishProject(this.client, {
      dir: composition.dir,
      composition: ENTRY_FILE,
      idempotencyKey: newIdempotencyKey(CLIENT_NAME),
    }).then((published) => published.assetId);
    this.assets.set(composition.name, { fingerprint, assetId });
    assetId.catch(() => {
      // A failed upload is tried again by the next render.
      if (this.assets.get(composition.name)?.assetId === assetId)
        this.assets.delete(composition.name);
    });
    return assetId;
  }
}

/** Paths, sizes and modification times of every file under `dir`, as one string. */
async function folderFingerprint(dir: string, prefix = ""): Promise<string> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true });
  const parts: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) parts.push(await folderFingerprint(dir, path));
    else if (entry.isFile()) {
      const info = await stat(join(dir, path));
      parts.push(`${path}:${info.size}:${info.mtimeMs}`);
    }
  }
  return parts.join("\n");
}
