// The batches: name, status, counts, age and the time left before the results are deleted; `New batch` makes
// a draft under the name typed (or today's date) and opens it. One-photo calls of the API are marked as such,
// and can be hidden.
import { useEffect, useState } from 'preact/hooks';
import type { Account, BatchList } from '@matte/client';
import { api, client, describeError, ok, type Shown } from '../api.ts';
import { DataTable, ErrorNote, formatAge, Link, navigate, span, TextField, useAction } from '../ui.tsx';

type Summary = BatchList['jobs'][number];
export interface BatchLabel {
  name: string | null;
  origin: 'batch' | 'image';
}

/** The names and origins of `ids` (GET /v1/batch-labels: the batch answer carries neither). */
export async function batchLabels(ids: string[]): Promise<Map<string, BatchLabel>> {
  if (!ids.length) return new Map();
  const { labels } = await ok(api.GET('/v1/batch-labels', { params: { query: { ids: ids.join(',') } } }));
  return new Map(labels.map((l) => [l.id, { name: l.name, origin: l.origin }]));
}

/** What a seller calls a batch: its name, or for a one-photo call the photo's name. */
export function batchTitle(id: string, label: BatchLabel | undefined): string {
  if (label?.origin === 'image') return `One photo: ${label.name ?? id}`;
  return label?.name ?? `Batch ${id}`;
}

/** When the batch's results are deleted: `resultsKeptForHours` after it finished (null while it has not). */
function deletesAt(batch: Summary, account: Account | null): number | null {
  if (!account) return null;
  return batch.finishedAt ? batch.finishedAt + account.limits.resultsKeptForHours * 3_600_000 : null;
}

export function BatchesPage() {
  const [list, setList] = useState<Summary[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [account, setAccount] = useState<Account | null>(null);
  const [loadError, setLoadError] = useState<Shown | null>(null);
  const [labels, setLabels] = useState<Map<string, BatchLabel>>(new Map());
  const [name, setName] = useState('');
  const [hideSingles, setHideSingles] = useState(false);

  async function load(before?: number) {
    try {
      const page = await client.listBatches({ limit: 20, ...(before ? { before } : {}) });
      const named = await batchLabels(page.jobs.map((j) => j.id));
      setLabels((old) => new Map([...(before ? old : []), ...named]));
      setList((old) => (before ? [...old, ...page.jobs] : page.jobs));
      setNext(page.nextBefore);
      setLoadError(null);
    } catch (err) {
      setLoadError(describeError(err));
    }
  }
  useEffect(() => {
    void load();
    client.account().then(setAccount, (err) => setLoadError(describeError(err)));
  }, []);

  const [create, createError, creating] = useAction(async () => {
    const given =
      name.trim() || `Batch of ${new Date().toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}`;
    const batch = await ok(api.POST('/v1/jobs', { body: { name: given } }));
    navigate(`/batches/${batch.id}`);
  });

  const now = Date.now();
  return (
    <section aria-labelledby="batches-title">
      <h1 id="batches-title">Batches</h1>
      <form
        class="fields inline"
        onSubmit={(event) => {
          event.preventDefault();
          void create();
        }}
      >
        <TextField
          id="batch-name"
          label="Name of the new batch"
          placeholder="e.g. Spring shoes"
          maxLength={120}
          value={name}
          onValue={setName}
        />
        <button type="submit" disabled={creating}>
          New batch
        </button>
      </form>
      <ErrorNote error={createError ?? loadError} />
      {list.some((b) => labels.get(b.id)?.origin === 'image') ? (
        <label class="check">
          <input type="checkbox" checked={hideSingles} onChange={(e) => setHideSingles(e.currentTarget.checked)} /> Hide
          one-photo calls made through the API
        </label>
      ) : null}
      {list.length === 0 && !loadError ? <p>No batches yet. Start one with New batch.</p> : null}
      {list.length > 0 ? (
        <DataTable
          label="Batches table"
          caption="Your batches, newest first"
          columns={['Batch', 'Status', 'Photos', 'Created', 'Deleted in']}
        >
          {list
            .filter((batch) => !(hideSingles && labels.get(batch.id)?.origin === 'image'))
            .map((batch) => {
              const at = deletesAt(batch, account);
              const c = batch.counts;
              const label = labels.get(batch.id);
              return (
                <tr key={batch.id}>
                  <td>
                    <Link to={`/batches/${batch.id}`}>{batchTitle(batch.id, label)}</Link>
                    <span class="hint block">
                      {label?.origin === 'image' ? 'one-photo call (API) · ' : ''}
                      {batch.id}
                    </span>
                  </td>
                  <td>
                    <span class={`status status-${batch.status}`}>{batch.status}</span>
                  </td>
                  <td>
                    {c.done} of {c.total} done
                    {c.failed ? `, ${c.failed} failed` : ''}
                    {c.refunded ? `, ${c.refunded} not charged` : ''}
                  </td>
                  <td>{formatAge(batch.createdAt, now)}</td>
                  <td>
                    {at === null
                      ? `${account?.limits.resultsKeptForHours ?? '?'} h after it ends`
                      : span(Math.max(0, Math.round((at - now) / 1000)))}
                  </td>
                </tr>
              );
            })}
        </DataTable>
      ) : null}
      {next !== null ? (
        <button type="button" class="quiet" onClick={() => void load(next)}>
          Older batches
        </button>
      ) : null}
    </section>
  );
}
