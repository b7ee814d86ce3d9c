// Turns what a request carried (uploaded files, links) into PhotoSources for IntakeService.addPhotos,
// applying the size limits and ZIP defences on the way.
import path from 'node:path';
import type { Config } from '../config.ts';
import { looksLikeZip, readZip, ZipError } from '../adapters/zip-archive.adapter.ts';
import { fetchPublic, OutboundError } from '../adapters/outbound-http.adapter.ts';
import { readHead, readWhole, withTempFile } from '../adapters/temp-files.adapter.ts';
import { AppError } from '../errors.ts';
import type { PhotoSource } from './intake.service.ts';
import { PHOTO_REFUSALS } from '../domain/photo-refusals.ts';

/** A file of a multipart upload, received into a temporary file. */
export interface UploadedFile {
  field: string;
  filename: string;
  path: string;
  size: number;
  truncated: boolean;
}

type Limits = Pick<
  Config,
  'maxImageBytes' | 'maxUploadBytes' | 'maxZipEntries' | 'maxZipUncompressedBytes' | 'allowPrivateNetworks' | 'dataDir'
>;

function zipSource(name: string, file: string, limits: Limits): PhotoSource {
  return {
    name,
    async *entries() {
      try {
        yield* readZip(file, {
          maxEntries: limits.maxZipEntries,
          maxTotalBytes: limits.maxZipUncompressedBytes,
          maxEntryBytes: limits.maxImageBytes,
        });
      } catch (err) {
        if (err instanceof ZipError) yield { name: '', reason: err.message };
        else throw err;
      }
    },
  };
}

export async function* sourcesFromFiles(files: UploadedFile[], limits: Limits): AsyncGenerator<PhotoSource> {
  for (const file of files) {
    if (file.field !== 'files') {
      yield { name: file.filename, reason: `Unexpected file field "${file.field}"; send photos as "files".` };
      continue;
    }
    if (file.truncated) {
      yield { name: file.filename, reason: PHOTO_REFUSALS.overUploadLimit(limits.maxUploadBytes) };
      continue;
    }
    if (file.size === 0) {
      yield { name: file.filename, reason: PHOTO_REFUSALS.empty };
      continue;
    }
    if (looksLikeZip(await readHead(file.path, 4))) {
      yield zipSource(file.filename, file.path, limits);
      continue;
    }
    if (file.size > limits.maxImageBytes) {
      yield { name: file.filename, reason: PHOTO_REFUSALS.overImageLimit(limits.maxImageBytes) };
      continue;
    }
    yield { name: file.filename, data: await readWhole(file.path) };
  }
}

function nameFromUrl(url: string, fallback: string): string {
  try {
    const base = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    return base.slice(0, 255) || fallback;
  } catch {
    return fallback;
  }
}

/** Fetches links one after another (polite to the hosts, bounded memory); each failure is a `rejected` entry. */
export async function* sourcesFromUrls(
  urls: string[],
  zipUrl: string | undefined,
  limits: Limits,
): AsyncGenerator<PhotoSource> {
  const fetchOpts = { allowPrivate: limits.allowPrivateNetworks, timeoutMs: 30_000 };
  for (const [i, url] of urls.entries()) {
    try {
      const { data } = await fetchPublic(url, { ...fetchOpts, maxBytes: limits.maxImageBytes });
      yield { name: nameFromUrl(url, `link-${i + 1}`), data };
    } catch (err) {
      yield { name: url, reason: err instanceof OutboundError ? err.message : 'The link could not be fetched.' };
    }
  }
  if (zipUrl) {
    let data: Buffer;
    try {
      ({ data } = await fetchPublic(zipUrl, { ...fetchOpts, maxBytes: limits.maxUploadBytes }));
    } catch (err) {
      yield { name: zipUrl, reason: err instanceof OutboundError ? err.message : 'The link could not be fetched.' };
      return;
    }
    if (!looksLikeZip(data)) {
      yield { name: zipUrl, reason: 'The linked file is not a ZIP archive.' };
      return;
    }
    yield* withTempFile(path.join(limits.dataDir, 'tmp'), '.zip', data, async function* (file) {
      yield zipSource(nameFromUrl(zipUrl, 'archive.zip'), file, limits);
    });
  }
}

/**
 * The one photo of POST /v1/images `imageUrl`: fetched under the per-image limit, or refused as the
 * spec's 422 PROCESSING_FAILED with the reason (TOO_LARGE, URL_REFUSED, URL_UNREACHABLE).
 */
export async function fetchOnePhoto(
  url: string,
  limits: Pick<Limits, 'maxImageBytes' | 'allowPrivateNetworks'>,
): Promise<Buffer> {
  try {
    return (
      await fetchPublic(url, {
        allowPrivate: limits.allowPrivateNetworks,
        maxBytes: limits.maxImageBytes,
        timeoutMs: 30_000,
      })
    ).data;
  } catch (err) {
    if (err instanceof OutboundError) {
      const reason =
        err.kind === 'too-large' ? 'TOO_LARGE' : err.kind === 'refused' ? 'URL_REFUSED' : 'URL_UNREACHABLE';
      throw new AppError('PROCESSING_FAILED', err.message, { reason }, 422);
    }
    throw err;
  }
}
