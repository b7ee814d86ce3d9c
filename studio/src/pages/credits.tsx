// Credits: plan and pack balances, what expires when, the ledger (paged, filtered by batch), buying a pack
// and redeeming a licence code.
import { useEffect, useState } from 'preact/hooks';
import type { Account, LedgerPage } from '@matte/client';
import { api, client, describeError, ok, type Shown } from '../api.ts';
import { DataTable, ErrorNote, TextField, formatDate, useAction } from '../ui.tsx';

type Entry = LedgerPage['entries'][number];

/** What each ledger row means to a seller; the row's own kind and reason are shown beneath. */
const KIND_TEXT: Record<string, string> = {
  reserve: 'Held for a photo',
  commit: 'Charged: the photo came out clean (its credit was held when it was queued)',
  release: 'Given back: the photo was not charged',
  claim: 'Refunded: a report the pixel check agreed with',
  grant: 'Added by the operator',
  purchase: 'Bought',
  welcome: 'Welcome credits',
  refresh: 'Monthly plan credits',
  expire: 'Plan credits expired at renewal',
  adjust: 'Corrected by the operator',
};

export function CreditsPage() {
  const [account, setAccount] = useState<Account | null>(null);
  const [packs, setPacks] = useState<{ id: string; credits: number }[]>([]);
  const [purchase, setPurchase] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [redeemed, setRedeemed] = useState('');
  const [loadError, setLoadError] = useState<Shown | null>(null);

  async function loadAccount() {
    try {
      setAccount(await client.account());
    } catch (err) {
      setLoadError(describeError(err));
    }
  }
  useEffect(() => {
    void loadAccount();
    api.GET('/v1/credits/packs').then(
      ({ data }) => setPacks(data?.packs ?? []),
      (err) => setLoadError(describeError(err)),
    );
  }, []);

  const [buy, buyError, buying] = useAction(async (packId: string) => {
    const answer = await ok(api.POST('/v1/credits/purchases', { body: { packId } }));
    setPurchase(
      answer.status === 'completed'
        ? `Bought ${answer.credits} credits.`
        : `Order ${answer.id} for ${answer.credits} credits is ${answer.status}. ${answer.instructions ?? ''}`,
    );
    await loadAccount();
  });
  const [redeem, redeemError, redeeming] = useAction(async () => {
    await ok(api.POST('/v1/license/redeem', { body: { code: code.trim() } }));
    setRedeemed('Licence redeemed.');
    setCode('');
    await loadAccount();
  });

  const credits = account?.credits;
  return (
    <section aria-labelledby="credits-title">
      <h1 id="credits-title">Credits</h1>
      <ErrorNote error={loadError} />
      {credits ? (
        <dl class="balances">
          <div>
            <dt>Plan</dt>
            <dd>
              {credits.plan}
              {credits.planResetsInDays !== null ? (
                <span class="hint"> (renews in {credits.planResetsInDays} days)</span>
              ) : null}
            </dd>
          </div>
          <div>
            <dt>Pack</dt>
            <dd>{credits.pack}</dd>
          </div>
          <div>
            <dt>Expiring</dt>
            <dd>
              {credits.expiring
                ? `${credits.expiring.credits} on ${formatDate(credits.expiring.at)} (in ${credits.expiring.inDays} days)`
                : 'nothing'}
            </dd>
          </div>
          <div>
            <dt>Spent first</dt>
            <dd>{account!.spendOrder.join(', then ')}</dd>
          </div>
        </dl>
      ) : null}
      {account?.license ? (
        <p>
          Licence tier {account.license.tier}: {account.license.allowance} photos a month, {account.license.status}
          {account.license.nextRefreshAt ? `, next refresh ${formatDate(account.license.nextRefreshAt)}` : ''}.
        </p>
      ) : null}
      <div class="panel">
        <h2>Buy a pack</h2>
        <p class="hint">Pack credits do not expire with the plan's month and are spent after the plan's.</p>
        <ul class="packs">
          {packs.map((pack) => (
            <li key={pack.id}>
              <button type="button" class="secondary" onClick={() => void buy(pack.id)} disabled={buying}>
                Buy {pack.credits} credits
              </button>
            </li>
          ))}
        </ul>
        <ErrorNote error={buyError} />
        {purchase ? <p role="status">{purchase}</p> : null}
      </div>
      <form
        class="panel"
        onSubmit={(event) => {
          event.preventDefault();
          void redeem();
        }}
      >
        <h2>Redeem a licence</h2>
        <TextField
          id="licence"
          label="Licence code"
          required
          maxLength={64}
          placeholder="lic_…"
          value={code}
          onValue={setCode}
        />
        <ErrorNote error={redeemError} />
        <button type="submit" disabled={redeeming}>
          Redeem
        </button>
        {redeemed ? <p role="status">{redeemed}</p> : null}
      </form>
      <Ledger />
    </section>
  );
}

function Ledger() {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [batch, setBatch] = useState('');
  const [shownFor, setShownFor] = useState('');
  const [load, error, loading] = useAction(async (jobId: string, before?: string) => {
    const page = await ok(
      api.GET('/v1/credits/ledger', {
        params: { query: { limit: 25, ...(before ? { before } : {}), ...(jobId ? { jobId } : {}) } },
      }),
    );
    setEntries((old) => (before ? [...old, ...page.entries] : page.entries));
    setNext(page.nextBefore);
    setShownFor(jobId);
  });
  useEffect(() => {
    void load('');
  }, []);
  return (
    <div class="panel">
      <h2>Ledger</h2>
      <form
        class="fields inline"
        onSubmit={(event) => {
          event.preventDefault();
          void load(batch.trim());
        }}
      >
        <TextField id="ledger-batch" label="Batch" placeholder="all batches" value={batch} onValue={setBatch} />
        <button type="submit" class="secondary" disabled={loading}>
          Filter
        </button>
      </form>
      <ErrorNote error={error} />
      <DataTable
        label="Ledger table"
        caption={`Credit movements${shownFor ? ` of batch ${shownFor}` : ''}, newest first`}
        columns={['When', 'What', 'Pool', 'Amount', 'Balance', 'Batch']}
      >
        {entries.map((entry) => (
          <tr key={entry.id}>
            <td>{formatDate(entry.createdAt)}</td>
            <td>
              {KIND_TEXT[entry.kind] ?? entry.kind}
              <span class="hint block">
                {entry.kind}
                {entry.reason ? `: ${entry.reason}` : ''}
              </span>
            </td>
            <td>{entry.pool}</td>
            <td class="num">{entry.amount > 0 ? `+${entry.amount}` : entry.amount}</td>
            <td class="num">{entry.balanceAfter}</td>
            <td>{entry.jobId ?? '—'}</td>
          </tr>
        ))}
      </DataTable>
      {entries.length === 0 && !loading ? <p>No movements{shownFor ? ' for this batch' : ''}.</p> : null}
      {next ? (
        <button type="button" class="quiet" onClick={() => void load(shownFor, next)} disabled={loading}>
          Older entries
        </button>
      ) : null}
    </div>
  );
}
