// Node-only helpers of @matte/client: photos from the file system, read lazily (fs.openAsBlob).
import fs from 'node:fs';
import path from 'node:path';

/** A file on disk as a File the client can upload, read only when it is sent. */
export async function fileFromPath(file: string, name = path.basename(file)): Promise<File> {
  const blob = await fs.openAsBlob(file);
  return new File([blob], name);
}

export * from './index.ts';
