// One batch: add photos (drop files, folders and ZIPs, pick them, or paste links), choose the look, start
// (or start a sample), watch each photo finish live over SSE, stop and continue, apply settings to a
// selection, and download the ZIP.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  INPUT_EXTENSIONS,
  INPUT_FORMATS,
  INPUT_FORMATS_TEXT,
  type Account,
  type BatchItem,
  type FullBatch,
} from '@matte/client';
import { api, client, describeError, ok, type Shown } from '../api.ts';
import { lookOf, lookSettings, LookPicker, type Look, type Preset } from '../settings.tsx';
import { ErrorNote, Link, plural, TextField, useAction } from '../ui.tsx';
import { DownloadPanel } from './download.tsx';
import { batchLabels, batchTitle, type BatchLabel } from './batches.tsx';

type Rejected = FullBatch['rejected'][number];
const LIVE = new Set(['queued', 'running']);

/** Merges a `since` answer's photos into the batch. */
function merge(old: FullBatch, next: FullBatch): FullBatch {
  if (!next.delta) return next;
  const byId = new Map(old.items.map((item) => [item.id, item]));
  for (const item of next.items) byId.set(item.id, item);
  return { ...next, items: [...byId.values()], delta: false };
}

export function BatchPage({ id }: { id: string }) {
  const [batch, setBatch] = useState<FullBatch | null>(null);
  const [presets, setPresets] = useState<Preset[]>([]);
  const [account, setAccount] = useState<Account | null>(null);
  const [loadError, setLoadError] = useState<Shown | null>(null);
  const [label, setLabel] = useState<BatchLabel | undefined>(undefined);
  const latest = useRef<FullBatch | null>(null);
  latest.current = batch;

  async function refresh() {
    try {
      const since = latest.current?.updatedAt;
      const next = (await ok(
        api.GET('/v1/jobs/{id}', { params: { path: { id }, query: since ? { since } : {} } }),
      )) as FullBatch;
      setBatch((old) => (old ? merge(old, next) : next));
      setLoadError(null);
    } catch (err) {
      setLoadError(describeError(err));
    }
  }

  useEffect(() => {
    setBatch(null);
    void client.getBatch(id).then(setBatch, (err) => setLoadError(describeError(err)));
    void client.presets().then(
      (p) => setPresets(p.presets),
      (err) => setLoadError(describeError(err)),
    );
    void client.account().then(setAccount, (err) => setLoadError(describeError(err)));
    void batchLabels([id]).then(
      (labels) => setLabel(labels.get(id)),
      (err) => setLoadError(describeError(err)),
    );
  }, [id]);

  // Live progress: the batch's event stream; each event asks for the photos changed since the last look
  // (at most once a second, so a big batch does not spend the request budget).
  const live = batch ? LIVE.has(batch.status) : false;
  useEffect(() => {
    if (!live) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        void refresh();
      }, 1000);
    };
    (async () => {
      try {
        for await (const update of client.follow(id, { signal: controller.signal })) {
          if (update.type !== 'snapshot') soon();
        }
        clearTimeout(timer);
        timer = undefined;
        await refresh();
      } catch (err) {
        if (!controller.signal.aborted) setLoadError(describeError(err));
      }
    })();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [id, live]);

  if (!batch) {
    return (
      <section>
        <h1>{batchTitle(id, label)}</h1>
        <ErrorNote error={loadError} />
        {!loadError ? <p>Loading…</p> : null}
      </section>
    );
  }

  const finished = batch.items.filter((item) => item.status === 'done');
  const needsLook = batch.items.filter((item) => item.review === 'red' || item.status === 'failed').length;
  return (
    <section aria-labelledby="batch-title">
      <p class="crumbs">
        <Link to="/batches">Batches</Link> / {batch.id}
      </p>
      <div class="title-row">
        <h1 id="batch-title">{batchTitle(batch.id, label)}</h1>
        <span class={`status status-${batch.status}`}>{batch.status}</span>
      </div>
      <ErrorNote error={loadError} />
      {batch.status === 'draft' ? <AddPhotos batch={batch} account={account} onAdded={setBatch} /> : null}
      {batch.rejected.length ? <RejectedList rejected={batch.rejected} /> : null}
      {batch.status === 'draft' ? (
        <StartPanel batch={batch} presets={presets} onStarted={setBatch} />
      ) : (
        <Progress batch={batch} onChange={setBatch} />
      )}
      {batch.status !== 'draft' && needsLook ? (
        <p>
          <Link to={`/batches/${batch.id}/photos/${reviewFirst(batch.items)!.id}`}>
            Review {plural(needsLook, 'photo')} that {needsLook === 1 ? 'needs' : 'need'} a look
          </Link>{' '}
          (not charged).
        </p>
      ) : null}
      <PhotoGrid batch={batch} presets={presets} onChange={setBatch} />
      {finished.length ? <DownloadPanel batch={batch} presets={presets} /> : null}
    </section>
  );
}

/** The photo to open first in review: a failed one, then the lowest score among the flagged. */
function reviewFirst(items: BatchItem[]): BatchItem | undefined {
  const failed = items.find((item) => item.status === 'failed');
  if (failed) return failed;
  return items
    .filter((item) => item.review === 'red')
    .sort((a, b) => (a.quality?.score ?? 100) - (b.quality?.score ?? 100))[0];
}

function RejectedList({ rejected }: { rejected: Rejected[] }) {
  return (
    <div class="rejected" role="status">
      <h2>Not added</h2>
      <ul>
        {rejected.map((r, i) => (
          <li key={`${r.name}-${i}`}>
            <strong>{r.name}</strong>: {r.reason}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Files of a drop: plain files, and every file inside dropped folders (ZIPs are sent as they are). */
async function droppedFiles(transfer: DataTransfer): Promise<File[]> {
  const entries = [...transfer.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean) as FileSystemEntry[];
  if (!entries.length) return [...transfer.files];
  const files: File[] = [];
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
      files.push(prefix ? new File([file], `${prefix}${file.name}`, { type: file.type }) : file);
      return;
    }
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) break;
      for (const child of batch) await walk(child, `${prefix}${entry.name}/`);
    }
  };
  for (const entry of entries) await walk(entry, '');
  return files;
}

/** A file the studio sends: a photo Matte reads, or a ZIP of them (by its name's extension). */
const isPhotoFile = (name: string) => {
  const dot = name.lastIndexOf('.');
  const ext = dot < 0 ? '' : name.slice(dot).toLowerCase();
  return INPUT_EXTENSIONS.has(ext) || ext === '.zip';
};

function AddPhotos(props: {
  batch: FullBatch;
  account: Account | null;
  /** The batch as the last answer gave it: its `rejected` lists every refusal so far. */
  onAdded: (batch: FullBatch) => void;
}) {
  const { batch, account, onAdded } = props;
  const [links, setLinks] = useState('');
  const [over, setOver] = useState(false);
  const [status, setStatus] = useState('');

  const [upload, uploadError, uploading] = useAction(async (files: File[]) => {
    const photos = files.filter((file) => isPhotoFile(file.name) || /^image\//.test(file.type));
    const skipped = files.length - photos.length;
    let added = 0;
    // A few files a request, so a big folder shows progress and one refusal does not lose the rest.
    for (let i = 0; i < photos.length; i += 20) {
      setStatus(`Uploading ${Math.min(i + 20, photos.length)} of ${photos.length}…`);
      const answer = await client.addFiles(batch.id, photos.slice(i, i + 20));
      added += answer.added;
      onAdded(answer as unknown as FullBatch);
    }
    setStatus(
      `${plural(added, 'photo')} added${skipped ? `; ${plural(skipped, 'file')} skipped (not ${INPUT_FORMATS_TEXT} or ZIP)` : ''}.`,
    );
  });

  const [addLinks, linksError, adding] = useAction(async () => {
    const urls = links
      .split(/\s+/)
      .map((link) => link.trim())
      .filter(Boolean);
    if (!urls.length) throw new Error('Paste one or more links (http or https), one per line.');
    // The API takes one ZIP link a request: the photo links go with the first, each other ZIP on its own.
    const zips = urls.filter((url) => /\.zip(\?|$)/i.test(url));
    const photoLinks = urls.filter((url) => !zips.includes(url));
    let added = 0;
    for (const [k, zip] of (zips.length ? zips : [undefined]).entries()) {
      const answer = await client.addUrls(batch.id, k === 0 ? photoLinks : [], zip);
      added += answer.added;
      onAdded(answer as unknown as FullBatch);
    }
    setLinks('');
    setStatus(`${plural(added, 'photo')} added from links.`);
  });

  return (
    <div class="panel">
      <h2>Add photos</h2>
      <div
        class={`drop${over ? ' over' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={async (event) => {
          event.preventDefault();
          setOver(false);
          if (event.dataTransfer) void upload(await droppedFiles(event.dataTransfer));
        }}
      >
        <p>Drop photos, folders or ZIPs here ({INPUT_FORMATS_TEXT}), or choose them:</p>
        <div class="pickers">
          <label for="photos">Photos</label>
          <input
            id="photos"
            type="file"
            multiple
            accept={`${Object.keys(INPUT_FORMATS)
              .map((f) => `image/${f}`)
              .join(',')},.zip,application/zip`}
            disabled={uploading}
            onChange={(e) => {
              const files = [...(e.currentTarget.files ?? [])];
              e.currentTarget.value = '';
              void upload(files);
            }}
          />
          <label for="folder">Folder</label>
          <input
            id="folder"
            type="file"
            // @ts-expect-error: the attribute that picks a folder is not in the DOM typings
            webkitdirectory=""
            disabled={uploading}
            onChange={(e) => {
              const files = [...(e.currentTarget.files ?? [])].map((file) =>
                file.webkitRelativePath ? new File([file], file.webkitRelativePath, { type: file.type }) : file,
              );
              e.currentTarget.value = '';
              void upload(files);
            }}
          />
        </div>
        {account ? <p class="hint">Up to {account.limits.photosPerBatch} photos a batch.</p> : null}
      </div>
      <p role="status" class="progress-note">
        {uploading ? status || 'Uploading…' : status}
      </p>
      <ErrorNote error={uploadError} />
      <TextField
        id="links"
        label="Photo links"
        rows={3}
        placeholder="https://shop.example/photo-1.jpg"
        value={links}
        onValue={setLinks}
        hint="One link per line; a link to a ZIP adds the photos inside it. The server fetches them."
      />
      <ErrorNote error={linksError} />
      <button type="button" class="secondary" onClick={() => void addLinks()} disabled={adding}>
        Add links
      </button>
    </div>
  );
}

function StartPanel(props: { batch: FullBatch; presets: Preset[]; onStarted: (batch: FullBatch) => void }) {
  const { batch, presets, onStarted } = props;
  const [look, setLook] = useState<Look>(lookOf(batch.options.defaults));
  const [sample, setSample] = useState('');
  const n = batch.counts.total;
  const sampleN = sample ? Number(sample) : 0;

  const [start, error, starting] = useAction(async () => {
    if (sample && (!Number.isInteger(sampleN) || sampleN < 1 || sampleN > 200))
      throw new Error('The sample is a whole number of photos from 1 to 200.');
    // The answer is the batch with every photo.
    const started = await client.start(batch.id, {
      ...(sampleN ? { sample: sampleN } : {}),
      defaults: { ...batch.options.defaults, ...lookSettings(look) },
    });
    onStarted(started as FullBatch);
  });

  const charged = sampleN ? Math.min(sampleN, n) : n;
  return (
    <div class="panel">
      <h2>Look</h2>
      <LookPicker
        idPrefix="start"
        look={look}
        onChange={setLook}
        presets={presets}
        batchId={batch.id}
        sample={batch.items[0]}
      />
      <h2>Start</h2>
      <TextField
        id="sample"
        label="Sample (optional)"
        type="number"
        min={1}
        max={200}
        value={sample}
        onValue={setSample}
        hint="Run this many photos first (a spread of the batch) and hold the rest until you continue."
      />
      <p>
        {n === 0
          ? 'Add photos to start.'
          : `Starting reserves ${plural(charged, 'credit')} (1 a photo); photos the check flags are not charged.`}
      </p>
      <ErrorNote error={error} />
      <button type="button" onClick={() => void start()} disabled={starting || n === 0}>
        Start
      </button>
    </div>
  );
}

function Progress({ batch, onChange }: { batch: FullBatch; onChange: (batch: FullBatch) => void }) {
  const c = batch.counts;
  const settled = c.done + c.failed;
  const [stop, stopError, stopping] = useAction(async () => {
    onChange((await client.cancel(batch.id)) as unknown as FullBatch);
  });
  const [resume, resumeError, resuming] = useAction(async () => {
    onChange((await client.continue(batch.id)) as FullBatch);
  });
  const running = LIVE.has(batch.status);
  return (
    <div class="panel">
      <h2>Progress</h2>
      <label for="progress">
        {settled} of {c.total - c.held} photos finished
        {c.held ? `, ${c.held} held` : ''}
        {c.failed ? `, ${c.failed} failed` : ''}
      </label>
      <progress id="progress" max={Math.max(1, c.total - c.held)} value={settled} />
      <p role="status" class="progress-note">
        {batch.status === 'queued'
          ? `Queued: waiting for the worker, which is busy with other photos; about ${Math.ceil(batch.estimate.remainingMs / 1000)} s of work once it starts.`
          : running
            ? `Running: about ${Math.ceil(batch.estimate.remainingMs / 1000)} s left.`
            : batch.status === 'paused'
              ? `Paused with ${plural(c.held, 'photo')} held (not charged).`
              : `Batch ${batch.status}.`}
      </p>
      <ErrorNote error={stopError ?? resumeError} />
      {running ? (
        <button type="button" class="secondary" onClick={() => void stop()} disabled={stopping}>
          Stop
        </button>
      ) : null}
      {batch.continueUrl ? (
        <button type="button" onClick={() => void resume()} disabled={resuming}>
          Continue ({plural(c.held, 'credit')})
        </button>
      ) : null}
    </div>
  );
}

function PhotoGrid(props: { batch: FullBatch; presets: Preset[]; onChange: (batch: FullBatch) => void }) {
  const { batch, presets, onChange } = props;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const finished = batch.items.filter((item) => item.status === 'done');
  const chosen = finished.filter((item) => selected.has(item.id));
  // Opens on the look the photos have now (a preset applied before, else the batch's own), so Apply without
  // a change keeps it: the first finished photo's, or the batch's settings while none has finished.
  const [look, setLook] = useState<Look>(lookOf(finished[0]?.settings ?? batch.options.defaults));

  const [applied, setApplied] = useState('');
  const [apply, applyError, applying] = useAction(async () => {
    const itemIds = chosen.length ? chosen.map((item) => item.id) : undefined;
    setApplied('');
    const sent = await api.POST('/v1/jobs/{id}/apply', {
      params: { path: { id: batch.id } },
      body: { itemIds, settings: lookSettings(look) },
    });
    const answer = await ok(Promise.resolve(sent));
    const n = Number(sent.response.headers.get('x-matte-applied') ?? 0);
    const skipped = Number(sent.response.headers.get('x-matte-skipped') ?? 0);
    setApplied(
      `Re-rendered ${plural(n, 'photo')}${skipped ? `; ${plural(skipped, 'photo')} changed meanwhile and kept that change` : ''}.`,
    );
    onChange(answer as FullBatch);
  });

  if (!batch.items.length) return null;
  const toggle = (id: string, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  return (
    <div class="panel">
      <h2>Photos ({batch.items.length})</h2>
      <ul class="grid">
        {batch.items.map((item) => (
          <li key={item.id} class={`tile tile-${item.status}${item.review === 'red' ? ' flagged' : ''}`}>
            {item.status === 'done' && item.thumbUrl ? (
              <img src={item.thumbUrl} alt={`${item.name}, cut out`} loading="lazy" class="checker" />
            ) : item.inputThumbUrl ? (
              <img src={item.inputThumbUrl} alt={`${item.name}, before`} loading="lazy" class="pending" />
            ) : (
              <div class="no-thumb" />
            )}
            <div class="tile-text">
              <span class="name">{item.name}</span>
              <span class="state">
                {item.status === 'done' ? (item.review === 'red' ? 'flagged, not charged' : 'done') : item.status}
                {item.error ? `: ${item.error.message}` : ''}
              </span>
              {item.status === 'done' ? (
                <label class="pick">
                  <input
                    type="checkbox"
                    checked={selected.has(item.id)}
                    onChange={(e) => toggle(item.id, e.currentTarget.checked)}
                  />
                  Select {item.name}
                </label>
              ) : null}
              {item.status === 'done' || item.status === 'failed' ? (
                <Link to={`/batches/${batch.id}/photos/${item.id}`}>Open {item.name}</Link>
              ) : null}
            </div>
          </li>
        ))}
      </ul>
      {finished.length ? (
        <div class="apply">
          <h3>Apply settings</h3>
          <p class="hint">
            Re-renders{' '}
            {chosen.length
              ? plural(chosen.length, 'selected photo')
              : `all ${plural(finished.length, 'finished photo')}`}{' '}
            from their cut-outs: free, the model does not run again.
          </p>
          <LookPicker
            idPrefix="apply"
            look={look}
            onChange={setLook}
            presets={presets}
            batchId={batch.id}
            sample={chosen[0] ?? finished[0]}
          />
          <ErrorNote error={applyError} />
          <button type="button" onClick={() => void apply()} disabled={applying}>
            Apply
          </button>
          <p role="status">{applying ? 'Re-rendering…' : applied}</p>
        </div>
      ) : null}
    </div>
  );
}
