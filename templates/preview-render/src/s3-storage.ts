// S3-compatible storage (AWS S3, R2, MinIO, GCS's S3 API, ...), used when S3_BUCKET is set.
// put uploads the finished file with @aws-sdk/lib-storage: one PUT, or a multipart upload for a
// large video; either way the object appears only when complete (a failed upload leaves nothing,
// its parts are deleted). get answers with a presigned GET URL, and
// GET /renders/:name redirects there: the store serves the bytes and Range itself, so videos
// never pass through this server (which may sleep, or cap web requests at 150 s).
import { createReadStream } from "node:fs";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { contentTypeFor } from "svc/shared";
import type { S3Settings } from "./config";
import { checkName, STORED_NAME, type RenderStore, type StoredVideo } from "./storage";

const PART_BYTES = 16 * 1024 * 1024;

/** The store cannot be used as configured; the message names the variable to fix. */
export class S3SetupError extends Error {
  override readonly name = "S3SetupError";
}

export class S3Store implements RenderStore {
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    // Node 20 is supported; the SDK's notice about its future Node versions is noise in the log.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
    this.client = new S3Client({
      region: settings.region,
      // Path-style (`endpoint/bucket/key`): what S3-compatible servers all accept.
      ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      // No default CRC32 checksums: streamed bodies would go up aws-chunked, which S3-compatible
      // servers often refuse.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      // An unreachable endpoint fails the start in seconds rather than hanging it.
      requestHandler: { connectionTimeout: 5000 },
    });
  }

  /** At start: the bucket is there and the credentials are accepted, or an S3SetupError. */
  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
    } catch (error) {
      throw new S3SetupError(this.describeFailure(error));
    }
  }

  async put(name: string, localFile: string): Promise<void> {
    checkName(name);
    // Not aborted midway: Upload.abort() stops waiting but lets a PUT in flight finish, which
    // could store the object after the job failed. A job stopped meanwhile deletes it afterwards.
    await new Upload({
      client: this.client,
      params: {
        Bucket: this.settings.bucket,
        Key: this.key(name),
        Body: createReadStream(localFile),
        ContentType: contentTypeFor(name),
      },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    }).done();
  }

  async get(name: string): Promise<StoredVideo | undefined> {
    if (!STORED_NAME.test(name)) return undefined;
    const object = { Bucket: this.settings.bucket, Key: this.key(name) };
    let size: number;
    try {
      size = (await this.client.send(new HeadObjectCommand(object))).ContentLength ?? 0;
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
    const url = await getSignedUrl(this.client, new GetObjectCommand(object), {
      expiresIn: this.settings.urlExpiresSeconds,
    });
    return { size, url };
  }

  async delete(name: string): Promise<void> {
    checkName(name);
    await this.client.send(
      new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.key(name) }),
    );
  }

  private key(name: string): string {
    return this.settings.prefix ? `${this.settings.prefix}/${name}` : name;
  }

  private describeFailure(error: unknown): string {
    const { bucket, endpoint, region } = this.settings;
    const where = endpoint ?? `AWS S3 (${region})`;
    const status = statusOf(error);
    const { name, code, message } = error as { name?: string; code?: string; message?: string };
    if (status === 401 || status === 403) {
      return `${where} refused the credentials for bucket "${bucket}" (HTTP ${status}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and that they may read and write the bucket.`;
    }
    if (status === 404) {
      return `There is no bucket "${bucket}" at ${where}: check S3_BUCKET (the bucket must exist; the template does not create it).`;
    }
    if (status === 301 || name === "PermanentRedirect") {
      return `The bucket "${bucket}" is not in ${region}: set AWS_REGION to the bucket's region.`;
    }
    if (name === "CredentialsProviderError") {
      return "No AWS credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the platform's role access to the bucket.";
    }
    if (status === undefined) {
      return `${where} could not be reached (${code ?? name}: ${message}): check AWS_ENDPOINT_URL${endpoint ? "" : " and AWS_REGION"}.`;
    }
    return `${where} answered HTTP ${status} (${name}) when asked for bucket "${bucket}": check S3_BUCKET, AWS_ENDPOINT_URL and the credentials.`;
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}
