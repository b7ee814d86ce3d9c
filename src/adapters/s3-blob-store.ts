// The blob store on S3-compatible object storage (AWS S3, Garage, MinIO, versitygw, Ceph…), so that API and
// worker processes on any machine share one set of files. @aws-sdk/client-s3 for the calls, lib-storage's
// Upload for large and streamed writes (multipart, 8 MiB parts). An object appears whole or not at all, so
// no temporary names are needed; a write that fails aborts its multipart upload.
//
// MATTE_BLOB_STORE=s3://bucket/prefix; the AWS way for the rest: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_REGION, AWS_ENDPOINT_URL_S3 (a non-AWS endpoint), and MATTE_S3_FORCE_PATH_STYLE=1 where the endpoint
// wants http://host/bucket/key rather than http://bucket.host/key.
import { PassThrough, Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { BlobStore } from './blob-store.ts';
import { errorCode, asError } from '../errors.ts';

export interface S3Location {
  bucket: string;
  prefix: string;
}

/** `s3://bucket/some/prefix` → bucket and prefix (no slashes at its ends). */
export function parseS3Url(url: string): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!m) throw new Error(`MATTE_BLOB_STORE must be s3://bucket or s3://bucket/prefix, got "${url}"`);
  return { bucket: m[1], prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

export interface S3Options {
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export function s3Client(options: S3Options): S3Client {
  return new S3Client({
    region: options.region || 'us-east-1',
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle ?? false,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    // Checksums only where S3 requires them: S3-compatible stores that predate the SDK's default CRC32
    // (and its aws-chunked uploads) would refuse or store the framing with the bytes.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 4,
  });
}

/** Objects up to this size are one PUT; larger ones, and streamed writes, go up in parts of this size. */
const PART_BYTES = 8 * 1024 * 1024;

const missing = (err: unknown) =>
  err instanceof S3ServiceException &&
  (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404);

/** An error as the rest of the service reads them: ENOENT for a missing key, EDQUOT for a store that is full. */
function translated(err: unknown, key: string): unknown {
  if (missing(err)) return Object.assign(new Error(`no blob ${key}`), { code: 'ENOENT' });
  if (
    err instanceof S3ServiceException &&
    (/quota|storagefull|insufficientstorage/i.test(err.name) || err.$metadata?.httpStatusCode === 507)
  )
    return Object.assign(new Error(`the object store is full: ${err.name}`), { code: 'EDQUOT', cause: err });
  return err;
}

export class S3BlobStore implements BlobStore {
  constructor(
    private readonly client: S3Client,
    private readonly location: S3Location,
  ) {}

  /** The object key of a blob key. Keys are made by the service; one that could climb out is refused. */
  private key(key: string): string {
    if (!key || key.startsWith('/') || key.split('/').some((part) => part === '..' || part === '.' || part === ''))
      throw new Error(`blob key escapes the store: ${key}`);
    return this.location.prefix ? `${this.location.prefix}/${key}` : key;
  }

  /** Whether the bucket answers (readiness). */
  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }));
  }

  async put(key: string, data: Buffer): Promise<void> {
    const Key = this.key(key);
    try {
      if (data.length <= PART_BYTES)
        await this.client.send(
          new PutObjectCommand({ Bucket: this.location.bucket, Key, Body: data, ContentLength: data.length }),
        );
      else await this.upload(Key, data);
    } catch (err) {
      throw translated(err, key);
    }
  }

  async putParts(key: string, parts: Promise<Uint8Array>[], _whole?: Promise<Buffer>): Promise<void> {
    const Key = this.key(key);
    for (const part of parts) part.catch(() => undefined);
    // The parts as a stream, each as soon as it and those before it are there; a failed part fails the
    // stream, and Upload aborts the multipart upload, so nothing is stored.
    let failedPart: { error: unknown } | undefined;
    async function* inOrder() {
      for (const part of parts) {
        try {
          yield await part;
        } catch (error) {
          failedPart = { error };
          throw error;
        }
      }
    }
    try {
      await this.upload(Key, Readable.from(inOrder()));
    } catch (err) {
      // The part's own failure is the caller's, even where aborting the upload failed too.
      throw failedPart ? failedPart.error : translated(err, key);
    }
  }

  private async upload(Key: string, Body: Buffer | Readable): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key, Body },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async copy(from: string, to: string): Promise<void> {
    const source = this.key(from);
    const Key = this.key(to);
    try {
      // A server-side copy: the bytes never come back through this process.
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.location.bucket,
          Key,
          CopySource: `${this.location.bucket}/${source.split('/').map(encodeURIComponent).join('/')}`,
        }),
      );
    } catch (err) {
      throw translated(err, from);
    }
  }

  async get(key: string): Promise<Buffer> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.key(key) }));
      return Buffer.from(await out.Body!.transformToByteArray());
    } catch (err) {
      throw translated(err, key);
    }
  }

  async find(key: string): Promise<Buffer | undefined> {
    try {
      return await this.get(key);
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return undefined;
      throw err;
    }
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.key(key) }));
      return { size: Number(head.ContentLength ?? 0) };
    } catch (err) {
      if (missing(err)) return undefined;
      throw translated(err, key);
    }
  }

  /** Streamed: the object's bytes flow through as they arrive (a ZIP of many results never sits in memory). */
  createReadStream(key: string): Readable {
    const out = new PassThrough();
    let Key: string;
    try {
      Key = this.key(key);
    } catch (err) {
      process.nextTick(() => out.destroy(asError(err)));
      return out;
    }
    this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key })).then(
      (answer) => {
        const body = answer.Body as Readable;
        body.on('error', (err) => out.destroy(err));
        out.on('close', () => body.destroy());
        body.pipe(out);
      },
      (err: unknown) => out.destroy(asError(translated(err, key))),
    );
    return out;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.key(key) }));
  }

  /** Every blob under `prefix/` (and `prefix` itself), as deleting a folder does on the filesystem. */
  async deletePrefix(prefix: string): Promise<void> {
    const base = this.key(prefix);
    await this.delete(prefix);
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: `${base}/`, ContinuationToken: token }),
      );
      const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
      if (keys.length)
        await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.location.bucket, Delete: { Objects: keys, Quiet: true } }),
        );
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}
