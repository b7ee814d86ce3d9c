// A real S3-compatible server for the tests: s3rver on loopback, in a temporary directory, with a bucket.
// Its credentials are S3RVER/S3RVER; it does not understand the SDK's default CRC32 checksums or aws-chunked
// uploads, which the store's client turns off (src/adapters/s3-blob-store.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface S3Server {
  endpoint: string;
  bucket: string;
  dir: string;
  /** The environment a Matte process needs to keep its files in this bucket under `prefix`. */
  env(prefix?: string): Record<string, string>;
  /** Every object key stored under the bucket, read from the server's own directory. */
  objects(): string[];
  close(): Promise<void>;
}

export async function startS3(bucket = 'matte'): Promise<S3Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    dir,
    env: (prefix = 'files') => ({
      MATTE_BLOB_STORE: `s3://${bucket}/${prefix}`,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      MATTE_S3_FORCE_PATH_STYLE: '1',
    }),
    objects: () =>
      fs
        .readdirSync(path.join(dir, bucket), { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('._S3rver_object'))
        .map((f) => f.slice(0, -'._S3rver_object'.length)),
    async close() {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
