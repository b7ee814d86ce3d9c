// GET /v1/jobs/{id}/download: what goes into a batch's ZIP and under which names. The plan is made
// (and every option checked) before a byte is sent; each file is read, converted or rendered only
// when the archive reaches it, so memory stays flat however many photos the batch holds.
//   include   rendered (default), cutouts, originals; with more than one group, a folder each
//   presets   extra presets rendered on the fly from the stored cut-outs, a folder each
//   format    converts every rendered file (not cut-outs, which stay PNG, nor originals)
//   optimize  marketplace (default: a file over its preset's upload limit is re-encoded until it fits),
//             lossless, web, off
// A file that needs no conversion goes in as stored, with its size known: when every file is such,
// the answer has a Content-Length.
import { AppError, notFound } from '../errors.ts';
import type { Store } from '../db/store.ts';
import type { ItemRow, JobRow } from '../db/schema.ts';
import type { BlobStore } from '../adapters/blob-store.ts';
import type { ImageRenderer } from '../adapters/images/renderer.ts';
import type { Readable } from 'node:stream';
import { writeZip, type ZipSource } from '../adapters/zip-writer.adapter.ts';
import type { ImageFormat, StoredItemMeta, Optimize, Settings } from '../domain/batch.schemas.ts';
import { findPreset, isKnownPresetId } from '../presets/presets.ts';
import { planLayout, outputFormatFor } from '../pipeline/compose.ts';
import { drawCutout } from '../pipeline/photo-pipeline.ts';
import type { BatchQueries } from './batch-queries.service.ts';
import { resultFiles } from './blob-keys.ts';
import { patchSettings } from './settings.ts';
import { baseName, fillPattern, parsePattern, UniqueNames, type TokenValues } from './zip-names.ts';
import { extensionOf } from '@matte/client/formats';
import { storedFormat, storedMeta } from './job-view.ts';

export interface DownloadQuery {
  format?: ImageFormat;
  pattern?: string;
  start?: number;
  items?: string;
  optimize?: Optimize;
  include?: string;
  presets?: string;
  skus?: string;
}

export interface DownloadPlan {
  fileName: string;
  sources: ZipSource[];
}

const GROUPS = ['rendered', 'cutouts', 'originals'] as const;
type Group = (typeof GROUPS)[number];
const isGroup = (name: string): name is Group => GROUPS.some((group) => group === name);
const MAX_SKU = 100;

function invalid(path: string, message: string): never {
  throw new AppError('VALIDATION', message, { errors: [{ path: `querystring/${path}`, message }] });
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export class DownloadService {
  constructor(
    private readonly deps: { store: Store; blobs: BlobStore; renderer: ImageRenderer; queries: BatchQueries },
  ) {}

  /**
   * The batch's ZIP, streamed: every option is checked (and every refusal thrown) before the first byte.
   * `size` is known when no entry needs converting.
   */
  async archive(
    accountId: string,
    jobId: string,
    q: DownloadQuery,
  ): Promise<{ fileName: string; stream: Readable; size: number | undefined }> {
    const plan = await this.plan(accountId, jobId, q);
    const zip = writeZip(plan.sources);
    return { fileName: plan.fileName, stream: zip.stream, size: await zip.size };
  }

  async plan(accountId: string, jobId: string, q: DownloadQuery): Promise<DownloadPlan> {
    const job = await this.deps.queries.requireJob(accountId, jobId);
    const include = this.groups(q.include);
    const presets = this.presets(q.presets);
    const items = await this.select(jobId, q.items);
    const skus = this.skus(q.skus, q.items, items.length);
    const pattern = q.pattern ?? '{name}';
    const tokens = parsePattern(pattern);
    if (tokens.has('sku') && !skus)
      invalid('skus', 'The pattern uses {sku}: give `skus`, a JSON array aligned with `items`.');
    const optimize = q.optimize ?? 'marketplace';
    const folders = include.length + presets.length > 1;
    const names = new UniqueNames(q.pattern !== undefined);
    const start = q.start ?? 1;
    const date = new Date(job.created_at).toISOString().slice(0, 10);
    const width = String(items.length).length;
    const sources: ZipSource[] = [];

    for (const [i, item] of items.entries()) {
      const meta = storedMeta(item);
      const settings = item.settings;
      const files = resultFiles(item);
      const values = (preset: string, w: number, h: number): TokenValues => ({
        name: baseName(item.name),
        index: String(start + i),
        n: String(i + 1).padStart(width, '0'),
        preset,
        w: String(w),
        h: String(h),
        date,
        sku: skus?.[i] ?? '',
      });
      const mtime = new Date(item.finished_at ?? item.updated_at);
      const name = (folder: string, v: TokenValues, format: string) =>
        names.take(folders ? folder : '', fillPattern(pattern, v), extensionOf(format));

      for (const group of include) {
        if (group === 'rendered') {
          const stored = storedFormat(item);
          const format = q.format ?? stored;
          const out = meta.output ?? { width: item.source_width, height: item.source_height };
          sources.push(
            await this.storedOrConverted(
              name('rendered', values(settings.presetId, out.width, out.height), format),
              files.output,
              stored,
              format,
              optimize,
              findPreset(settings.presetId)?.maxBytes,
              mtime,
            ),
          );
        } else if (group === 'cutouts') {
          const size = meta.cutout ?? { width: item.source_width, height: item.source_height };
          sources.push(
            await this.stored(
              name('cutouts', values(settings.presetId, size.width, size.height), 'png'),
              files.cutout,
              mtime,
            ),
          );
        } else {
          const format = extensionOf(item.source_format);
          sources.push(
            await this.stored(
              name('originals', values('original', item.source_width, item.source_height), format),
              item.input_blob,
              mtime,
            ),
          );
        }
      }
      for (const presetId of presets) {
        const target = patchSettings(
          settings,
          { presetId },
          { hasBackgroundImage: job.background_blob !== null, path: 'querystring/presets' },
        );
        const cutoutSize = meta.cutout ?? { width: item.source_width, height: item.source_height };
        const layout = planLayout(cutoutSize, meta.bbox ?? null, target);
        const rendered = outputFormatFor(target);
        const format = q.format ?? rendered;
        sources.push({
          name: name(
            presetId,
            values(presetId, layout.canvas.width * target.scale, layout.canvas.height * target.scale),
            format,
          ),
          mtime,
          open: () => this.renderFor(job, files.cutout, cutoutSize, meta, target, format, optimize),
        });
      }
    }
    return { fileName: `${fillPattern('{name}', { ...emptyValues(), name: job.name ?? job.id })}.zip`, sources };
  }

  private groups(value: string | undefined): Group[] {
    const asked = value === undefined ? ['rendered'] : list(value);
    if (!asked.length) invalid('include', '`include` names no group; use rendered, cutouts, originals.');
    for (const g of asked)
      if (!isGroup(g)) invalid('include', `Unknown group "${g}" in include; use rendered, cutouts, originals.`);
    return [...new Set(asked.filter(isGroup))];
  }

  private presets(value: string | undefined): string[] {
    const ids = [...new Set(list(value))];
    for (const id of ids) {
      if (!isKnownPresetId(id) || id === 'custom')
        invalid('presets', `Unknown preset "${id}" in presets; see GET /v1/presets.`);
    }
    return ids;
  }

  /** The photos named in `items` (each finished), or every finished photo; 409 when none has finished. */
  private async select(jobId: string, value: string | undefined): Promise<ItemRow[]> {
    const all = await this.deps.store.repos.items.listForJob(jobId);
    const finished = (i: ItemRow) => i.status === 'done' && i.output_format !== null;
    if (value === undefined) {
      const done = all.filter(finished);
      if (!done.length)
        throw new AppError('CONFLICT', 'No photo of this batch has finished yet; there is nothing to download.', {
          reason: 'NOT_DONE',
          jobId,
        });
      return done;
    }
    const ids = list(value);
    if (!ids.length) invalid('items', '`items` names no photo.');
    if (new Set(ids).size !== ids.length) invalid('items', '`items` names a photo twice.');
    const byId = new Map(all.map((i) => [i.id, i]));
    return ids.map((id) => {
      const item = byId.get(id);
      if (!item) throw notFound('photo');
      if (!finished(item))
        throw new AppError('CONFLICT', `Photo ${item.name} is ${item.status}; only finished photos are downloaded.`, {
          reason: 'NOT_DONE',
          jobId,
          itemId: id,
        });
      return item;
    });
  }

  private skus(value: string | undefined, items: string | undefined, count: number): string[] | undefined {
    if (value === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      invalid('skus', '`skus` is not JSON; give a JSON array of strings, e.g. ["A-1","A-2"].');
    }
    if (!Array.isArray(parsed)) invalid('skus', '`skus` must be a JSON array of strings.');
    if (items === undefined)
      invalid('skus', '`skus` needs `items`: the SKUs are matched to the photos named there, in order.');
    if (parsed.length !== count)
      invalid('skus', `\`skus\` has ${parsed.length} entries and \`items\` ${count}; they must align.`);
    return parsed.map((sku, i) => {
      if (
        (typeof sku !== 'string' && typeof sku !== 'number') ||
        String(sku).trim() === '' ||
        String(sku).length > MAX_SKU
      ) {
        invalid('skus', `SKU ${i + 1} must be a non-empty string of at most ${MAX_SKU} characters.`);
      }
      return String(sku);
    });
  }

  private async stored(name: string, key: string, mtime: Date): Promise<ZipSource> {
    const stat = await this.deps.blobs.stat(key);
    if (!stat)
      throw new AppError(
        'CONFLICT',
        'A file of this batch was removed meanwhile (the batch expired or was changed); try again.',
        { reason: 'NOT_DONE' },
      );
    return { name, size: stat.size, mtime, open: async () => this.deps.blobs.createReadStream(key) };
  }

  /** As stored when that is what the options give (known size); else converted when the archive reaches it. */
  private async storedOrConverted(
    name: string,
    key: string,
    stored: ImageFormat,
    format: ImageFormat,
    optimize: Optimize,
    maxBytes: number | undefined,
    mtime: Date,
  ): Promise<ZipSource> {
    const entry = await this.stored(name, key, mtime);
    const asIs =
      format === stored &&
      (optimize === 'off' || (optimize === 'marketplace' && (maxBytes === undefined || entry.size! <= maxBytes)));
    if (asIs) return entry;
    return {
      name,
      mtime,
      open: async () =>
        this.deps.renderer.exportOutput(await this.deps.blobs.get(key), stored, format, optimize, maxBytes),
    };
  }

  private async renderFor(
    job: JobRow,
    cutoutKey: string,
    size: { width: number; height: number },
    meta: StoredItemMeta,
    settings: Settings,
    format: ImageFormat,
    optimize: Optimize,
  ): Promise<Buffer> {
    const background =
      settings.background.mode === 'image' && job.background_blob
        ? await this.deps.blobs.get(job.background_blob)
        : null;
    const rendered = await drawCutout(
      this.deps,
      await this.deps.blobs.get(cutoutKey),
      size,
      meta.bbox ?? null,
      settings,
      background,
    );
    return this.deps.renderer.exportOutput(
      rendered.output,
      rendered.format,
      format,
      optimize,
      findPreset(settings.presetId)?.maxBytes,
    );
  }
}

function emptyValues(): TokenValues {
  return { name: '', index: '', n: '', preset: '', w: '', h: '', date: '', sku: '' };
}
