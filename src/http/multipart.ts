// Receives a multipart body without buffering it: each file streams to a temp file under DATA_DIR/tmp
// (with the per-file byte cap), text fields are collected. The caller removes the temp files. A
// one-image request takes its file in memory instead (receiveFormInMemory).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import { AppError, errorCode, errorMessage } from '../errors.ts';

interface ReceivedFile {
  field: string;
  filename: string;
  path: string;
  size: number;
  truncated: boolean;
}

export interface ReceivedForm {
  files: ReceivedFile[];
  fields: Record<string, string>;
  cleanup(): Promise<void>;
}

export function isMultipart(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');
}

/** The base name a client sent (browsers may send C:\fakepath\x.jpg), never a path. */
export function cleanFilename(name: string | undefined, fallback: string): string {
  const base = (name ?? '').split(/[\\/]/).pop()?.trim() ?? '';
  // eslint-disable-next-line no-control-regex
  return base.replace(/[\u0000-\u001f]/g, '').slice(0, 255) || fallback;
}

export async function receiveForm(
  request: FastifyRequest,
  tmpDir: string,
  limits: { fileSize: number; files: number },
): Promise<ReceivedForm> {
  await fsp.mkdir(tmpDir, { recursive: true });
  const files: ReceivedFile[] = [];
  const cleanup = async () => {
    await Promise.all(files.map((f) => fsp.rm(f.path, { force: true })));
  };
  try {
    const { fields } = await readParts(request, limits, async (part, field, filename) => {
      const file: ReceivedFile = {
        field,
        filename,
        path: path.join(tmpDir, `${randomUUID()}.upload`),
        size: 0,
        truncated: false,
      };
      files.push(file);
      await pipeline(part.file, fs.createWriteStream(file.path));
      file.truncated = part.file.truncated;
      file.size = (await fsp.stat(file.path)).size;
    });
    return { files, fields, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

export interface ReceivedBytes {
  field: string;
  filename: string;
  data: Buffer;
  truncated: boolean;
}

/**
 * As receiveForm, for a request of one image whose bytes are wanted in memory anyway (POST /v1/images,
 * a batch's or a re-render's background): the file is collected in memory, at most `fileSize` bytes of
 * it, instead of written to a temp file and read back (tens of trips through libuv's pool).
 */
export async function receiveFormInMemory(
  request: FastifyRequest,
  limits: { fileSize: number; files: number },
): Promise<{ files: ReceivedBytes[]; fields: Record<string, string> }> {
  const files: ReceivedBytes[] = [];
  const { fields } = await readParts(request, limits, async (part, field, filename) => {
    const chunks: Buffer[] = [];
    for await (const chunk of part.file) chunks.push(chunk as Buffer);
    files.push({ field, filename, data: Buffer.concat(chunks), truncated: part.file.truncated });
  });
  return { files, fields };
}

/** The parts of a multipart body: each file to `onFile` (which must consume its stream), the text fields collected; errors as AppErrors. */
async function readParts(
  request: FastifyRequest,
  limits: { fileSize: number; files: number },
  onFile: (part: MultipartFile, field: string, filename: string) => Promise<void>,
): Promise<{ fields: Record<string, string> }> {
  const fields: Record<string, string> = {};
  let count = 0;
  try {
    const parts = request.parts({
      limits: {
        fileSize: limits.fileSize,
        files: limits.files,
        fields: 20,
        fieldSize: 1024 * 1024,
        parts: limits.files + 20,
      },
    });
    for await (const part of parts) {
      if (part.type === 'file') {
        count++;
        await onFile(part, part.fieldname, cleanFilename(part.filename, `file-${count}`));
      } else {
        if (typeof part.value !== 'string') continue;
        if (part.fieldname in fields)
          throw new AppError('VALIDATION', `Field "${part.fieldname}" was sent twice.`, {
            errors: [{ path: `body/${part.fieldname}`, message: 'must be sent once' }],
          });
        fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const code = errorCode(err);
    if (code === 'ENOSPC') throw new AppError('STORAGE_FULL', 'The data volume is full; nothing was added.');
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT')
      throw new AppError('VALIDATION', `At most ${limits.files} files per request.`);
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_REQ_FILE_TOO_LARGE')
      throw new AppError('VALIDATION', errorMessage(err));
    throw new AppError('VALIDATION', `The multipart body could not be read: ${errorMessage(err)}`);
  }
  return { fields };
}

/** Parses a JSON text field, reporting its path on failure. */
export function parseJsonField(value: string | undefined, field: string): unknown {
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    throw new AppError('VALIDATION', `Field "${field}" is not valid JSON.`, {
      errors: [{ path: `body/${field}`, message: 'must be a JSON object' }],
    });
  }
}
