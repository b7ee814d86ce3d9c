// The batches: status, counts, age and the time left before the results are deleted; `New batch` makes a
// draft and opens it.
import { useEffect, useState } from 'preact/hooks';
import type { Account, BatchList } from '@matte/client';
import { api, client, describeError, ok, type Shown } from '../api.ts';
import { DataTable, ErrorNote, formatAge, Link, navigate, span, useAction } from '../ui.tsx';

type Summary = BatchList['jobs'][number];

/** When the batch's results are deleted: `resultsKeptForHours` after it finished (null while it has not). */
export function deletesAt(batch: Summary, account: Account | null): number | null {
  if (!account) return null;
  return batch.finishedAt ? batch.finishedAt + account.limits.resultsKeptForHours * 3_600_000 : null;
}

export function BatchesPage() {
  const [list, setList] = useState<Summary[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [account, setAccount] = useState<Account | null>(null);
  const [loadError, setLoadError] = useState<Shown | null>(null);

  async function load(before?: number) {
    try {
      const page = await client.listBatches({ limit: 20, ...(before ? { before } : {}) });
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
    const name = `Batch ${new Date().toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}`;
    const batch = await ok(api.POST('/v1/jobs', { body: { name } }));
    navigate(`/batches/${batch.id}`);
  });

  const now = Date.now();
  return (
    <section aria-labelledby="batches-title">
      <div class="title-row">
        <h1 id="batches-title">Batches</h1>
        <button type="button" onClick={() => void create()} disabled={creating}>
          New batch
        </button>
      </div>
      <ErrorNote error={createError ?? loadError} />
      {list.length === 0 && !loadError ? <p>No batches yet. Start one with New batch.</p> : null}
      {list.length > 0 ? (
        <DataTable
          label="Batches table"
          caption="Your batches, newest first"
          columns={['Batch', 'Status', 'Photos', 'Created', 'Deleted in']}
        >
          {list.map((batch) => {
            const at = deletesAt(batch, account);
            const c = batch.counts;
            return (
              <tr key={batch.id}>
                <td>
                  <Link to={`/batches/${batch.id}`}>{batch.id}</Link>
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
