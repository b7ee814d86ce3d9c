// `matte remove PATH… -o OUT`: cuts out every photo under PATH with the API and writes the results under
// OUT, named after the inputs. Batches of up to the account's per-batch limit; a progress bar per batch on
// a terminal (plain lines otherwise); a summary of photos refused, failed and flagged by the check.
// A photo whose result is already in OUT is skipped, so running the same command again resumes it; Ctrl-C
// stops the batch on the server (photos not yet run are held and their credits released), keeps the
// results that finished, and exits 130; the same command run again continues that batch first (its name
// carries the command's run key), so no batch is left paused with photos held. A file that cannot be read,
// is not a photo or is a broken ZIP is left out with its reason, and the rest is cut out.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import cliProgress from 'cli-progress';
import type { BatchDefaults, BatchItem, FullBatch, MatteClient } from '@matte/client';
import { collectPhotos, type PhotoSource, type SkippedFile } from './inputs.ts';
import { UsageError } from './usage-error.ts';
import { closestWord } from '../parse-options.ts';
import { errorMessage } from '../../errors.ts';
import { FORMAT_FILES, INPUT_FORMATS_OR_ZIPS, OUTPUT_FORMATS, type OutputFormat } from '@matte/client/formats';

export interface RemoveOptions {
  paths: string[];
  out: string;
  preset?: string;
  background?: string;
  format?: OutputFormat;
  sample?: number;
  heavy: boolean;
  pattern: string;
  json: boolean;
}

export interface RemoveSummary {
  written: string[];
  /** Results already in OUT, not sent again. */
  skipped: number;
  /** Files left out before anything was sent: unreadable, not a photo, a ZIP that cannot be opened. */
  unreadable: SkippedFile[];
  /** Batches of an earlier run of the same command that were left unfinished (Ctrl-C), continued by this one. */
  resumed: string[];
  rejected: { name: string; reason: string }[];
  failed: { name: string; code: string; reason: string }[];
  flagged: { name: string; reason: string; file: string | null }[];
  /** Photos larger than the largest side a cut-out is made at: their results are that much smaller. */
  scaled: { name: string; from: string; to: string }[];
  held: number;
  batches: string[];
  interrupted: boolean;
}

/** A photo to send, and where its result goes under OUT (without extension). */
interface Planned {
  source: PhotoSource;
  base: string;
}

const OUTPUT_EXTENSIONS = [...new Set(OUTPUT_FORMATS.flatMap((f) => [FORMAT_FILES[f].extension, f]))];
/** Files per upload request, and bytes: well inside the server's per-request limit. */
const FILES_PER_REQUEST = 25;
const BYTES_PER_REQUEST = 48 * 1024 * 1024;

function parseBackground(value: string | undefined): BatchDefaults['background'] | undefined {
  if (value === undefined) return undefined;
  if (value === 'white' || value === 'transparent') return { mode: value };
  if (/^#[0-9a-fA-F]{6}$/.test(value)) return { mode: 'solid', color: value };
  throw new UsageError(`--background must be white, transparent or #RRGGBB, got "${value}"`);
}

/** The result's path under OUT for a photo, without extension: `{name}` and `{preset}` in the pattern. */
function resultBase(out: string, source: PhotoSource, pattern: string, preset: string): string {
  const dir = path.posix.dirname(source.key);
  const name = path.posix.basename(source.key);
  const file = pattern.replaceAll('{name}', name).replaceAll('{preset}', preset);
  if (!file || file.includes('/') || file.includes('\\') || file === '.' || file === '..')
    throw new UsageError(`--pattern must make a file name (tokens {name}, {preset}), got "${pattern}"`);
  return path.join(out, ...(dir === '.' ? [] : dir.split('/')), file);
}

function existingResult(base: string, format: OutputFormat | undefined): string | undefined {
  const exts = format ? [FORMAT_FILES[format].extension] : OUTPUT_EXTENSIONS;
  return exts.map((e) => `${base}.${e}`).find((f) => fs.existsSync(f));
}

const extensionOf = (contentType: string | null) =>
  FORMAT_FILES[OUTPUT_FORMATS.find((f) => contentType?.startsWith(FORMAT_FILES[f].contentType)) ?? 'png'].extension;

/** A bar per batch on a terminal, a line per photo otherwise; on stderr, so --json output stays clean. */
class Progress {
  private bar: cliProgress.SingleBar | null = null;
  begin(label: string, total: number) {
    if (process.stderr.isTTY) {
      this.bar = new cliProgress.SingleBar(
        { format: `${label} [{bar}] {value}/{total} {status}`, stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(total, 0, { status: '' });
    } else process.stderr.write(`${label}: ${total} photos\n`);
  }
  update(finished: number, total: number, line: string) {
    if (this.bar) this.bar.update(finished, { status: line.slice(0, 40) });
    else process.stderr.write(`  ${finished}/${total} ${line}\n`);
  }
  note(line: string) {
    if (this.bar) this.bar.stop();
    this.bar = null;
    process.stderr.write(`${line}\n`);
  }
  end() {
    this.bar?.stop();
    this.bar = null;
  }
}

export async function removeBackgrounds(
  client: MatteClient,
  options: RemoveOptions,
  interrupt: AbortSignal,
): Promise<RemoveSummary> {
  const background = parseBackground(options.background);
  const summary: RemoveSummary = {
    written: [],
    skipped: 0,
    unreadable: [],
    resumed: [],
    rejected: [],
    failed: [],
    flagged: [],
    scaled: [],
    held: 0,
    batches: [],
    interrupted: false,
  };
  const { sources, skipped } = await collectPhotos(options.paths);
  summary.unreadable = skipped;
  const progress = new Progress();
  if (sources.length === 0) {
    if (skipped.length) return summary; // each said why; exit 1
    throw new UsageError(`no photos found (${INPUT_FORMATS_OR_ZIPS})`);
  }
  const preset = options.preset ?? 'original';
  if (options.preset) await checkPreset(client, options.preset);
  const run = runKey(options, preset);
  // Every result's path first: a pattern that makes no file name is a usage error, before anything is sent.
  const all: Planned[] = sources.map((source) => ({
    source,
    base: resultBase(options.out, source, options.pattern, preset),
  }));
  // An earlier run of this command stopped with Ctrl-C: its batch is continued first, so no batch is left
  // paused with photos held (and their credits reserved), and nothing it finished is sent again.
  await resumeEarlierRuns(client, run, all, options, summary, progress, interrupt);
  if (interrupt.aborted) return summary;
  const planned: Planned[] = [];
  // What the earlier batch wrote just now is this run's work, not a result found in OUT.
  const fresh = new Set(summary.written.map((f) => f.slice(0, f.length - path.extname(f).length)));
  for (const entry of all) {
    if (!existingResult(entry.base, options.format)) planned.push(entry);
    else if (!fresh.has(entry.base)) summary.skipped++;
  }
  if (planned.length === 0) {
    if (!summary.resumed.length)
      progress.note(`nothing to do: all ${sources.length} results are already in ${options.out}`);
    return summary;
  }
  const { account, heavyModel } = await client.accountWithTiers();
  // Without a heavy model of its own the server's heavy tier runs the light model again: the same cut-outs.
  const heavy = options.heavy && heavyModel === 'stronger';
  if (options.heavy && !heavy)
    progress.note('no heavy re-run: this server runs no heavy model of its own, so it would give the same cut-outs');
  const perBatch = account.limits.photosPerBatch;
  const chunks: Planned[][] = [];
  for (let i = 0; i < planned.length; i += perBatch) chunks.push(planned.slice(i, i + perBatch));
  if (options.sample) chunks.splice(1);

  for (const [n, chunk] of chunks.entries()) {
    if (interrupt.aborted) break;
    const label = chunks.length > 1 ? `batch ${n + 1}/${chunks.length}` : 'batch';
    // Upload names are unique within the batch, so answers map back to their sources.
    const byName = new Map<string, Planned>();
    for (const entry of chunk) {
      let name = entry.source.name;
      for (let k = 2; byName.has(name); k++)
        name = `${path.parse(entry.source.name).name} (${k})${path.extname(entry.source.name)}`;
      byName.set(name, entry);
    }
    const names = [...byName.keys()];
    // The batch is made once a first photo is read and ready to send: a run that sends nothing leaves no draft.
    let batch: { id: string } | null = null;
    let added = 0;
    try {
      for (let i = 0; i < names.length;) {
        if (interrupt.aborted) break;
        const group: { name: string; data: Uint8Array }[] = [];
        let bytes = 0;
        while (i < names.length && group.length < FILES_PER_REQUEST && bytes < BYTES_PER_REQUEST) {
          const source = byName.get(names[i])!.source;
          const name = names[i++];
          // A photo that cannot be read now (a damaged ZIP entry, a file gone since it was listed) is left out
          // with its reason, and the rest goes on.
          const data = await source.read().catch((err: unknown) => {
            summary.unreadable.push({ origin: source.origin, reason: errorMessage(err) });
            return null;
          });
          if (!data) continue;
          group.push({ name, data });
          bytes += data.length;
        }
        if (group.length === 0) continue;
        batch ??= await client.createBatch({
          name: `matte remove ${new Date().toISOString().slice(0, 16)} ${run}`,
          defaults: { presetId: preset, ...(background ? { background } : {}) },
        });
        if (!summary.batches.includes(batch.id)) summary.batches.push(batch.id);
        const answer = await client.addFiles(batch.id, group);
        added += answer.added;
        for (const r of answer.rejected)
          summary.rejected.push({ name: byName.get(r.name)?.source.origin ?? r.name, reason: r.reason });
      }
    } catch (err) {
      // A draft left with nothing in it is removed: nothing was charged, and nothing is lost.
      if (batch && added === 0) await client.deleteBatch(batch.id).catch(() => undefined);
      throw err;
    }
    if (!batch) continue;
    if (interrupt.aborted || added === 0) {
      await client.deleteBatch(batch.id).catch(() => undefined);
      summary.batches = summary.batches.filter((id) => id !== batch.id);
      if (interrupt.aborted) break;
      continue;
    }
    const draft = await client.getBatch(batch.id);
    await client.start(batch.id, options.sample ? { sample: options.sample } : {});
    const job = await follow(client, batch.id, label, draft.items.length, progress, interrupt);
    summary.interrupted ||= interrupt.aborted;
    let items = job.items;
    if (heavy && !interrupt.aborted) items = await heavyRerun(client, job, progress, interrupt);
    await writeResults(client, batch.id, items, byName, options, summary);
    summary.held += items.filter((i) => i.status === 'held').length;
  }
  progress.end();
  return summary;
}

/** A --preset the server does not have is a usage mistake, named with the closest and every one it has. */
async function checkPreset(client: MatteClient, preset: string): Promise<void> {
  const ids = (await client.presets()).presets.map((p) => p.id);
  if (ids.includes(preset)) return;
  const near = closestWord(preset, ids);
  throw new UsageError(
    `unknown preset "${preset}"${near ? `; did you mean "${near}"?` : ''} (presets: ${ids.join(', ')})`,
  );
}

/**
 * What makes two runs of `matte remove` the same command: the output folder and every option that shapes a
 * result. Written into the batch's name, in brackets, so the next run finds the batches this one left.
 */
function runKey(options: RemoveOptions, preset: string): string {
  const what = JSON.stringify([
    path.resolve(options.out),
    preset,
    options.background ?? null,
    options.format ?? null,
    options.pattern,
  ]);
  return `[run ${crypto.createHash('sha256').update(what).digest('hex').slice(0, 12)}]`;
}

/**
 * The batches an earlier run of the same command left unfinished: a draft (stopped while uploading) is deleted,
 * nothing was charged; a paused batch (stopped while running: its queued photos held, their credits released)
 * is continued; a queued or running one is followed. Each then has its results written, as the run that made it
 * would have, for the photos it can name (an upload name that one photo of this command has).
 */
async function resumeEarlierRuns(
  client: MatteClient,
  run: string,
  all: Planned[],
  options: RemoveOptions,
  summary: RemoveSummary,
  progress: Progress,
  interrupt: AbortSignal,
): Promise<void> {
  // The account's newest 100 batches, in one request (a run left its batch minutes or hours ago).
  const { jobs } = await client.listBatches({ limit: 100 });
  const open = jobs.filter((j) => ['draft', 'queued', 'running', 'paused'].includes(j.status));
  if (open.length === 0) return;
  // The batch answer carries no name; GET /v1/batch-labels gives the names (up to 100 ids, as many as listed).
  const ids = open.map((j) => j.id).join(',');
  const { data, error } = await client.api.GET('/v1/batch-labels', { params: { query: { ids } } });
  if (error) throw new Error(`batch names could not be read: ${JSON.stringify(error)}`);
  const names = new Map(data.labels.map((label) => [label.id, label.name]));
  const earlier = open.filter((j) => names.get(j.id)?.endsWith(` ${run}`));
  if (earlier.length === 0) return;
  // Upload names are the photos' file names; one that two photos share cannot be told apart, and is sent again.
  const byName = new Map<string, Planned | null>();
  for (const entry of all) byName.set(entry.source.name, byName.has(entry.source.name) ? null : entry);
  // Results already in OUT (the interrupted run wrote what had finished) are not fetched again.
  const named = new Map(
    [...byName].filter((e): e is [string, Planned] => e[1] !== null && !existingResult(e[1].base, options.format)),
  );
  for (const job of earlier.sort((a, b) => a.createdAt - b.createdAt)) {
    if (interrupt.aborted) return;
    if (job.status === 'draft') {
      await client.deleteBatch(job.id).catch(() => undefined);
      continue;
    }
    progress.note(`continuing ${job.id}, left ${job.status} by an earlier run of this command`);
    summary.resumed.push(job.id);
    summary.batches.push(job.id);
    if (job.status === 'paused') await client.continue(job.id);
    const done = await follow(client, job.id, 'earlier batch', job.counts.total, progress, interrupt);
    summary.interrupted ||= interrupt.aborted;
    await writeResults(client, job.id, done.items, named, options, summary);
    summary.held += done.items.filter((i) => i.status === 'held').length;
  }
}

/** Follows the batch with a progress bar until it settles; on interrupt, stops it and waits for in-flight photos. */
async function follow(
  client: MatteClient,
  id: string,
  label: string,
  total: number,
  progress: Progress,
  interrupt: AbortSignal,
): Promise<FullBatch> {
  progress.begin(label, total);
  let stopping: Promise<unknown> | null = null;
  const stop = () => {
    progress.note('stopping the batch: photos not yet run keep their credits');
    stopping = client.cancel(id).catch(() => undefined);
  };
  if (interrupt.aborted) stop();
  else interrupt.addEventListener('abort', stop, { once: true });
  try {
    let finished = 0;
    for await (const update of client.follow(id)) {
      if (update.type === 'event' && update.event.event.startsWith('item.')) {
        finished++;
        const data = update.event.data;
        const photo = 'itemId' in data ? data : undefined;
        const what = update.event.event === 'item.failed' ? 'failed' : photo?.review === 'red' ? 'flagged' : 'done';
        progress.update(finished, total, `${what}: ${photo?.name ?? ''}`);
      } else if (update.type === 'snapshot') {
        finished = update.batch.counts.done + update.batch.counts.failed;
        progress.update(finished, total, update.batch.status);
      }
    }
    if (stopping) await stopping;
  } finally {
    interrupt.removeEventListener('abort', stop);
    progress.end();
  }
  return client.getBatch(id);
}

/** Runs the photos the check flagged again on the heavy tier (2 credits each), then follows the batch. */
async function heavyRerun(
  client: MatteClient,
  job: FullBatch,
  progress: Progress,
  interrupt: AbortSignal,
): Promise<BatchItem[]> {
  const flagged = job.items.filter((i) => i.status === 'done' && i.review === 'red' && i.canRerun);
  if (flagged.length === 0) return job.items;
  progress.note(`re-running ${flagged.length} flagged photo(s) on the heavy tier: 2 credits each`);
  for (const item of flagged) await client.retryItem(job.id, item.id, 'heavy');
  return (await follow(client, job.id, 'heavy re-run', job.counts.total, progress, interrupt)).items;
}

async function writeResults(
  client: MatteClient,
  id: string,
  items: BatchItem[],
  byName: Map<string, Planned>,
  options: RemoveOptions,
  summary: RemoveSummary,
): Promise<void> {
  for (const item of items) {
    const entry = byName.get(item.name);
    const name = entry?.source.origin ?? item.name;
    if (item.status === 'failed') {
      summary.failed.push({ name, code: item.error?.code ?? 'PROCESSING_FAILED', reason: item.error?.message ?? '' });
      continue;
    }
    if (item.status !== 'done' || !entry) continue;
    const { stream, contentType } = await client.file(id, item.id, {
      variant: 'output',
      download: '1',
      ...(options.format ? { format: options.format } : {}),
    });
    const file = `${entry.base}.${extensionOf(contentType)}`;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // Written beside, then renamed: an interrupted run never leaves half a result to be skipped next time.
    const temp = `${file}.part`;
    await pipeline(Readable.fromWeb(stream as import('node:stream/web').ReadableStream), fs.createWriteStream(temp));
    fs.renameSync(temp, file);
    summary.written.push(file);
    if (item.review === 'red') {
      const top = item.quality?.flags[0];
      summary.flagged.push({ name, reason: top?.label ?? 'low overall score', file });
    }
    const { source, cutout } = item.meta ?? {};
    if (source && cutout && (cutout.width < source.width || cutout.height < source.height))
      summary.scaled.push({ name, from: `${source.width}x${source.height}`, to: `${cutout.width}x${cutout.height}` });
  }
}
