// Uploads in temporary files (multipart bodies are received into DATA_DIR/tmp): their first bytes,
// their whole content, and a downloaded archive parked on disk while it is read.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';

/** The first `bytes` bytes of a file (fewer when it is shorter). */
export async function readHead(file: string, bytes: number): Promise<Buffer> {
  const handle = await fsp.open(file, 'r');
  try {
    const head = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(head, 0, bytes, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export function readWhole(file: string): Promise<Buffer> {
  return fsp.readFile(file);
}

/** Writes `data` to a new file under `dir` for as long as `use` runs over it, then removes it. */
export async function* withTempFile<T>(
  dir: string,
  extension: string,
  data: Buffer,
  use: (file: string) => AsyncGenerator<T>,
): AsyncGenerator<T> {
  const file = path.join(dir, `${randomUUID()}${extension}`);
  await fsp.mkdir(dir, { recursive: true });
  await fsp.writeFile(file, data);
  try {
    yield* use(file);
  } finally {
    await fsp.rm(file, { force: true });
  }
}
