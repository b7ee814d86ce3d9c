// The client verbs of bin/matte, built on @matte/client: login, remove, batches list|show|download,
// account. Every verb takes --json. Bad input exits 2 with one line; a server or network failure exits 1, and
// so does a `remove` that left a file out (unreadable, refused, failed) after cutting out the rest; Ctrl-C
// during `remove` stops the batch and exits 130.
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createMatteClient, MatteApiError, MatteConnectionError, type MatteClient } from '@matte/client';
import { normaliseUrl, readLogin, saveLogin } from './login-store.ts';
import { removeBackgrounds, type RemoveOptions, type RemoveSummary } from './remove.ts';
import { MAX_WORKING_EDGE } from '../../domain/batch-rules.ts';
import { UsageError } from './usage-error.ts';
import { parseOptions } from '../parse-options.ts';
import { formatOfExtension, OUTPUT_FORMATS, type OutputFormat } from '@matte/client/formats';
import { errorCode } from '../../errors.ts';

const OPTIONS = {
  url: { type: 'string' },
  'api-key-stdin': { type: 'boolean' },
  out: { type: 'string', short: 'o' },
  preset: { type: 'string' },
  background: { type: 'string' },
  format: { type: 'string' },
  sample: { type: 'string' },
  heavy: { type: 'boolean' },
  pattern: { type: 'string' },
  status: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

function positiveInteger(value: string | undefined, name: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1 || Number(value) > max)
    throw new UsageError(`--${name} must be a whole number from 1 to ${max}, got "${value}"`);
  return Number(value);
}

function format(value: string | undefined): OutputFormat | undefined {
  if (value === undefined) return undefined;
  const v = formatOfExtension(value);
  if (!v)
    throw new UsageError(`--format must be ${OUTPUT_FORMATS.join(', ').replace(/, (\w+)$/, ' or $1')}, got "${value}"`);
  return v;
}

/**
 * Reads one line from the terminal with echo off (raw mode); Ctrl-C leaves with 130. Echo goes off before the
 * prompt is shown, so a key typed or pasted the moment the prompt appears is never echoed.
 */
function askHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  stdin.setRawMode(true);
  process.stderr.write(question);
  stdin.resume();
  return new Promise((resolve) => {
    let typed = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          finish();
          return resolve(typed.trim());
        }
        if (ch === '\u0003') {
          finish();
          process.exit(130);
        }
        typed = ch === '\u007f' || ch === '\b' ? typed.slice(0, -1) : typed + ch;
      }
    };
    stdin.on('data', onData);
  });
}

function clientFor(env: NodeJS.ProcessEnv): MatteClient {
  const { url, apiKey } = readLogin(env);
  return createMatteClient({
    baseUrl: url,
    apiKey,
    // Waits for the server's rate limit are silent: the client keeps to it from the headers of each answer, and
    // a 429 that comes anyway (another client on the key) is waited out without a line each time. A broken
    // connection says so.
    retry: {
      onRetry: ({ delayMs, reason }) => {
        if (reason !== 'HTTP 429')
          process.stderr.write(`matte: ${reason}; trying again in ${Math.ceil(delayMs / 1000)} s\n`);
      },
    },
  });
}

async function run(argv: string[], env: NodeJS.ProcessEnv, interrupt: AbortSignal): Promise<number> {
  const [noun, ...rest] = argv;
  const { values, positionals } = parseOptions(rest, OPTIONS, true);
  const print = (obj: unknown, text: string) =>
    process.stdout.write(values.json ? `${JSON.stringify(obj)}\n` : `${text}\n`);
  switch (noun) {
    case 'login': {
      if (positionals.length) throw new UsageError(`login takes no arguments, got "${positionals[0]}"`);
      const url = normaliseUrl(values.url ?? env.MATTE_URL ?? 'http://localhost:8080');
      // On a terminal the key is asked for, without echo; otherwise it is read from standard input.
      const apiKey =
        process.stdin.isTTY && !values['api-key-stdin']
          ? await askHidden('API key (not shown as you type): ')
          : fs.readFileSync(0, 'utf8').trim();
      if (!apiKey)
        throw new UsageError(
          'no API key: type it when asked, or pipe it: matte login --url URL --api-key-stdin < key.txt',
        );
      const account = await createMatteClient({ baseUrl: url, apiKey }).account();
      const file = saveLogin({ url, apiKey }, env);
      print(
        { url, key: account.auth.key, file },
        `logged in to ${url} with key ${account.auth.key}; ${account.credits.plan + account.credits.pack} credits (saved in ${file})`,
      );
      return 0;
    }
    case 'account': {
      const { account, heavyModel } = await clientFor(env).accountWithTiers();
      const { credits, limits } = account;
      print(
        { ...account, heavyModel },
        [
          `key ${account.auth.key ?? '-'}: ${credits.plan} plan credits${credits.planResetsInDays !== null ? ` (renew in ${credits.planResetsInDays} days)` : ''}, ${credits.pack} pack credits`,
          ...(credits.expiring ? [`${credits.expiring.credits} expire on ${credits.expiring.at}`] : []),
          `limits: ${limits.photosPerBatch} photos a batch, ${limits.activeBatches} running batches, ${limits.requestsPerMinute} requests a minute, ${limits.photosPerHour} photos an hour; results kept ${limits.resultsKeptForHours} h`,
          `tiers: light 1 credit, heavy 2 credits (${heavyModel === 'stronger' ? 'a stronger model' : 'the same model as light: this server runs no heavy model of its own'})`,
        ].join('\n'),
      );
      return 0;
    }
    case 'batches': {
      const [verb, id, extra] = positionals;
      const client = clientFor(env);
      if (verb === 'list') {
        const limit = positiveInteger(values.limit, 'limit', 100);
        const status = values.status as never;
        const list = await client.listBatches({ ...(limit ? { limit } : {}), ...(status ? { status } : {}) });
        // Names, and which batches were one-photo calls (POST /v1/images): those, and drafts with nothing in them,
        // are left out unless --all, so a seller's batches are not lost among them.
        const { data, error } = list.jobs.length
          ? await client.api.GET('/v1/batch-labels', {
              params: { query: { ids: list.jobs.map((j) => j.id).join(',') } },
            })
          : { data: { labels: [] }, error: undefined };
        if (error) throw new Error(`batch names could not be read: ${JSON.stringify(error)}`);
        const label = new Map(data.labels.map((l) => [l.id, l]));
        const onePhoto = (j: (typeof list.jobs)[number]) => label.get(j.id)?.origin === 'image';
        const empty = (j: (typeof list.jobs)[number]) => j.status === 'draft' && j.counts.total === 0;
        const shown = values.all ? list.jobs : list.jobs.filter((j) => !onePhoto(j) && !empty(j));
        const hidden = { onePhoto: list.jobs.filter(onePhoto).length, emptyDrafts: list.jobs.filter(empty).length };
        const line = (j: (typeof list.jobs)[number]) => {
          const c = j.counts;
          const name = onePhoto(j) ? '(one photo)' : (label.get(j.id)?.name ?? '');
          return `${j.id}  ${j.status.padEnd(9)} ${c.done}/${c.total} done${c.failed ? `, ${c.failed} failed` : ''}  ${new Date(j.createdAt).toISOString()}  ${name}`.trimEnd();
        };
        const note =
          !values.all && hidden.onePhoto + hidden.emptyDrafts
            ? [
                `(not shown: ${[
                  hidden.onePhoto ? `${hidden.onePhoto} one-photo call(s)` : '',
                  hidden.emptyDrafts ? `${hidden.emptyDrafts} empty draft(s)` : '',
                ]
                  .filter(Boolean)
                  .join(' and ')}; --all shows them)`,
              ]
            : [];
        print(
          {
            ...list,
            jobs: shown.map((j) => ({ ...j, name: label.get(j.id)?.name ?? null, origin: label.get(j.id)?.origin })),
            ...(values.all ? {} : { hidden }),
          },
          [...(shown.length ? shown.map(line) : ['no batches']), ...note].join('\n'),
        );
        return 0;
      }
      if (!id || extra) throw new UsageError(`usage: matte batches ${verb ?? 'show|download'} ID`);
      if (verb === 'show') {
        const job = await client.getBatch(id);
        const c = job.counts;
        print(
          job,
          [
            `${job.id}: ${job.status}; ${c.total} photos: ${c.done} done, ${c.failed} failed, ${c.held} held, ${c.pending + c.processing} to run; ${c.refunded} not charged`,
            ...job.items.map(
              (i) =>
                `  ${i.name}: ${i.status}${i.review === 'red' ? ' (flagged)' : ''}${i.error ? ` ${i.error.code}: ${i.error.message}` : ''}`,
            ),
          ].join('\n'),
        );
        return 0;
      }
      if (verb === 'download') {
        if (!values.out) throw new UsageError('batches download needs -o FILE.zip');
        const { stream } = await client.download(id, {
          ...(format(values.format) ? { format: format(values.format) } : {}),
          ...(values.pattern ? { pattern: values.pattern } : {}),
        });
        const temp = `${values.out}.part`;
        await pipeline(
          Readable.fromWeb(stream as import('node:stream/web').ReadableStream),
          fs.createWriteStream(temp),
        );
        fs.renameSync(temp, values.out);
        const bytes = fs.statSync(values.out).size;
        print({ file: path.resolve(values.out), bytes }, `written: ${values.out} (${bytes} bytes)`);
        return 0;
      }
      throw new UsageError(`unknown batches verb "${verb ?? ''}" (list, show, download)`);
    }
    case 'remove': {
      if (positionals.length === 0) throw new UsageError('remove needs at least one file, folder or ZIP');
      if (!values.out) throw new UsageError('remove needs -o OUT, the folder for the results');
      const options: RemoveOptions = {
        paths: positionals,
        out: values.out,
        preset: values.preset,
        background: values.background,
        format: format(values.format),
        sample: positiveInteger(values.sample, 'sample', 200),
        heavy: values.heavy ?? false,
        pattern: values.pattern ?? '{name}',
        json: values.json ?? false,
      };
      const client = clientFor(env);
      const summary = await removeBackgrounds(client, options, interrupt);
      const left = summary.unreadable.length + summary.rejected.length + summary.failed.length;
      print(summary, removeSummaryLines(summary, options.out).join('\n'));
      // 130 stopped; 1 when a file was skipped, refused or failed (the rest was cut out); 0 all done.
      return summary.interrupted ? 130 : left ? 1 : 0;
    }
    default:
      throw new UsageError(`unknown command "${noun}"`);
  }
}

/** What `matte remove` says when it is done: a line of totals, then a line a photo not cut out as it was sent. */
export function removeSummaryLines(summary: RemoveSummary, out: string): string[] {
  const left = summary.unreadable.length + summary.rejected.length + summary.failed.length;
  return [
    `${summary.written.length} written to ${out}${summary.skipped ? `, ${summary.skipped} already there` : ''}${left ? `; ${left} not cut out (below)` : ''}`,
    ...summary.resumed.map((id) => `continued ${id}, which an earlier run of this command left unfinished`),
    ...summary.unreadable.map((u) => `skipped: ${u.origin}: ${u.reason}`),
    ...summary.rejected.map((r) => `refused: ${r.name}: ${r.reason}`),
    ...summary.failed.map((f) => `failed: ${f.name}: ${f.code} ${f.reason}`),
    ...summary.flagged.map((f) => `flagged by the check (not charged): ${f.name}: ${f.reason}`),
    ...summary.scaled.map(
      (s) =>
        `scaled down: ${s.name}: cut out at ${s.to}, the largest side Matte works at being ${MAX_WORKING_EDGE} px, from ${s.from}`,
    ),
    ...(summary.held ? [`${summary.held} photo(s) held, not charged: run the same command again to do them`] : []),
    ...(summary.interrupted ? ['stopped: run the same command again to finish'] : []),
  ];
}

/** Runs a client verb; the exit code follows the rules above. */
export async function runClientCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = () => {
    // The first Ctrl-C stops cleanly; a second one leaves at once.
    if (++signals > 1) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  try {
    return await run(argv, env, controller.signal);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const input =
      err instanceof UsageError ||
      errorCode(err)?.startsWith('ERR_PARSE_ARGS') ||
      (err instanceof MatteApiError && err.status < 500 && err.status !== 429);
    const where = err instanceof MatteConnectionError ? ' (is the server running? see matte login)' : '';
    process.stderr.write(`matte: ${message.split('\n')[0]}${where}\n`);
    return input ? 2 : 1;
  } finally {
    process.off('SIGINT', onSignal);
  }
}
