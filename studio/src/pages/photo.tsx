// One photo in review: before and after (a slider) on a checkerboard or on the preset's background, the
// check's flags drawn as boxes, the touch-up brushes (touch-up.tsx), a report drawn on the cut-out with the
// pixel check's verdict, and a re-run on the heavy tier after its cost is shown.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { BatchItem, ClaimReason, FullBatch, ReviewQueue } from '@matte/client';
import { api, client, describeError, ok, type Shown } from '../api.ts';
import { ErrorNote, Link, useAction } from '../ui.tsx';
import { TouchUpPanel } from './touch-up.tsx';

type Reason = ClaimReason;
/** Every reason the API takes, in words (a reason added to the API fails the studio's type check until named here). */
const REASON_LABELS: Record<Reason, string> = {
  'background-kept': 'Background left in',
  'missing-part': 'Part of the product cut away',
  hole: 'Hole in the product',
  'extra-object': 'Extra object kept',
  'rough-edges': 'Rough edges',
};
const REASONS = Object.entries(REASON_LABELS) as [Reason, string][];
interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface Verdict {
  accepted: boolean;
  reason: string;
  evidence: string;
  confidence: number;
}

export function PhotoPage({ batchId, itemId }: { batchId: string; itemId: string }) {
  const [batch, setBatch] = useState<FullBatch | null>(null);
  const [queue, setQueue] = useState<ReviewQueue | null>(null);
  const [loadError, setLoadError] = useState<Shown | null>(null);
  const [strongerHeavy, setStrongerHeavy] = useState(true);
  async function load() {
    try {
      const [b, q] = await Promise.all([client.getBatch(batchId), client.review(batchId)]);
      setBatch(b);
      setQueue(q);
    } catch (err) {
      setLoadError(describeError(err));
    }
  }
  useEffect(() => {
    void load();
  }, [batchId]);
  // What the heavy tier runs is the server's, not the photo's: read once, not again after each report or re-run.
  useEffect(() => {
    client.accountWithTiers().then(
      ({ heavyModel }) => setStrongerHeavy(heavyModel === 'stronger'),
      (err) => setLoadError(describeError(err)),
    );
  }, []);

  const item = batch?.items.find((x) => x.id === itemId);
  return (
    <section aria-labelledby="photo-title">
      <p class="crumbs">
        <Link to="/batches">Batches</Link> / <Link to={`/batches/${batchId}`}>{batchId}</Link> / review
      </p>
      <h1 id="photo-title">{item ? item.name : 'Photo'}</h1>
      <ErrorNote error={loadError} />
      <div class="review-layout">
        {queue ? <ReviewList batch={batch} queue={queue} current={itemId} /> : null}
        {batch && item ? (
          <PhotoDetail batch={batch} item={item} strongerHeavy={strongerHeavy} onChange={load} onBatch={setBatch} />
        ) : !loadError ? (
          <p>Loading…</p>
        ) : null}
      </div>
    </section>
  );
}

function ReviewList({ batch, queue, current }: { batch: FullBatch | null; queue: ReviewQueue; current: string }) {
  const queued = new Set(queue.items.map((entry) => entry.id));
  const others = (batch?.items ?? []).filter((item) => item.status === 'done' && !queued.has(item.id));
  return (
    <nav aria-label="Photos to review" class="review-list">
      <h2>Needs a look ({queue.total})</h2>
      {queue.items.length ? (
        <ul>
          {queue.items.map((entry) => (
            <li key={entry.id}>
              <Link
                to={`/batches/${queue.jobId}/photos/${entry.id}`}
                aria-current={entry.id === current ? 'page' : undefined}
              >
                {entry.name}
              </Link>
              <span class="why">
                {entry.kind === 'failed' ? 'failed' : 'flagged'}: {entry.reason}
              </span>
              {entry.kind === 'review' ? (
                <Link to={`/batches/${queue.jobId}/photos/${entry.id}`}>Touch up {entry.name}</Link>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <p>Nothing flagged: every result passed the check.</p>
      )}
      {others.length ? (
        <>
          <h2>Other finished photos</h2>
          <ul>
            {others.map((item) => (
              <li key={item.id}>
                <Link
                  to={`/batches/${queue.jobId}/photos/${item.id}`}
                  aria-current={item.id === current ? 'page' : undefined}
                >
                  {item.name}
                </Link>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </nav>
  );
}

/**
 * The check's score as a person reads it: on its 0-100 scale, with what it means (docs/check.md: below 50 the
 * cut-out is judged broken and not charged).
 */
function scoreText(score: number | undefined): string {
  if (score === undefined) return 'no score';
  const s = Math.round(score);
  return `score ${s} of 100 (${s < 50 ? 'under 50: the cut-out is judged broken' : '50 or more passes'})`;
}

function PhotoDetail({
  batch,
  item,
  strongerHeavy,
  onChange,
  onBatch,
}: {
  batch: FullBatch;
  item: BatchItem;
  /** Whether the server runs a heavy model of its own (GET /v1/account's X-Matte-Heavy-Model). */
  strongerHeavy: boolean;
  /** Reads the batch and the review queue again. */
  onChange: () => Promise<void>;
  /** Shows a batch an action answered with (a touch-up leaves the review queue as it was). */
  onBatch: (batch: FullBatch) => void;
}) {
  const [split, setSplit] = useState(50);
  const [onPreset, setOnPreset] = useState(false);
  const [reason, setReason] = useState<Reason>('background-kept');
  const [box, setBox] = useState<Box | null>(null);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [confirmHeavy, setConfirmHeavy] = useState(false);
  const cutout = item.meta?.cutout;

  const [report, reportError, reporting] = useAction(async () => {
    if (!box) throw new Error('Mark the region first: drag on the cut-out, or type X, Y, width and height.');
    const answer = await ok(
      api.POST('/v1/jobs/{id}/items/{itemId}/report', {
        params: { path: { id: batch.id, itemId: item.id } },
        body: { reason, region: box },
      }),
    );
    setVerdict(answer.verdict as Verdict);
    await onChange();
  });
  const [rerun, rerunError, rerunning] = useAction(async (tier: 'light' | 'heavy') => {
    await client.retryItem(batch.id, item.id, tier);
    setConfirmHeavy(false);
    await onChange();
  });

  return (
    <div class="detail">
      <p>
        {item.status === 'failed'
          ? `Failed: ${item.error?.message ?? 'the model could not process it'}. Not charged.`
          : item.review === 'red'
            ? `Flagged by the check: ${scoreText(item.quality?.score)}; not charged.`
            : item.status === 'done'
              ? `Passed the check: ${scoreText(item.quality?.score)}; ${item.refunded ? 'refunded' : `${item.credits} credit${item.credits === 1 ? '' : 's'}`}.`
              : `Status: ${item.status}.`}
        {item.tier === 'heavy' ? ' Heavy tier.' : ''}
      </p>
      {item.status === 'done' && cutout ? (
        <>
          <Stage item={item} split={split} onPreset={onPreset} box={box} onBox={setBox} />
          <div class="fields inline">
            <label for="split">Before / after</label>
            <input
              id="split"
              type="range"
              min={0}
              max={100}
              value={split}
              onInput={(e) => setSplit(Number(e.currentTarget.value))}
            />
            <label class="pick">
              <input type="checkbox" checked={onPreset} onChange={(e) => setOnPreset(e.currentTarget.checked)} />
              Show on the preset's background
            </label>
          </div>
          {item.quality?.flags.length ? (
            <>
              <h2>The check's flags</h2>
              <ul class="flags">
                {item.quality.flags.map((flag) => (
                  <li key={flag.code}>
                    <strong>{flag.label}</strong> (severity {flag.severity.toFixed(2)})
                    {flag.bbox ? ', drawn as a box' : ''}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          <TouchUpPanel key={item.id} batch={batch} item={item} onBatch={onBatch} />
          {item.canReport ? (
            <ReportForm
              cutout={cutout}
              box={box}
              onBox={setBox}
              reason={reason}
              onReason={setReason}
              busy={reporting}
              error={reportError}
              onSubmit={() => void report()}
            />
          ) : (
            <p class="hint">
              {item.refunded
                ? 'This photo is not charged, so there is nothing to report.'
                : 'No reports left for this photo (two at most).'}
            </p>
          )}
          {verdict ? (
            <p role="status" class={`verdict ${verdict.accepted ? 'accepted' : 'rejected'}`}>
              {verdict.accepted
                ? 'Report accepted: the credit is refunded. '
                : 'Report rejected: the pixels do not show it. '}
              {verdict.evidence}
            </p>
          ) : null}
        </>
      ) : null}
      {item.claims.length ? (
        <>
          <h2>Reports</h2>
          <ul>
            {item.claims.map((claim) => (
              <li key={claim.at}>
                {claim.reason}: {claim.verdict} — {claim.evidence}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {item.canRerun ? (
        <div class="panel">
          <h2>Run it again</h2>
          <ErrorNote error={rerunError} />
          {confirmHeavy ? (
            <div role="group" aria-label="Confirm the heavy re-run">
              <p>
                The heavy tier costs 2 credits for this photo, reserved now and refunded if the check flags it again.
              </p>
              {strongerHeavy ? null : (
                <p class="warning">
                  This server runs no heavy model of its own: the heavy tier runs the same model again and gives the
                  same cut-out.
                </p>
              )}
              <button type="button" onClick={() => void rerun('heavy')} disabled={rerunning}>
                Confirm re-run (2 credits)
              </button>{' '}
              <button type="button" class="quiet" onClick={() => setConfirmHeavy(false)}>
                Cancel
              </button>
            </div>
          ) : (
            <>
              {/* The heavy re-run leads only where it runs a stronger model; otherwise it would give the same cut-out for 2 credits. */}
              <button
                type="button"
                class={strongerHeavy ? undefined : 'secondary'}
                onClick={() => setConfirmHeavy(true)}
              >
                Re-run on heavy tier{strongerHeavy ? ' (a stronger model)' : ''}
              </button>{' '}
              <button
                type="button"
                class={strongerHeavy ? 'secondary' : undefined}
                onClick={() => void rerun('light')}
                disabled={rerunning}
              >
                Re-run (1 credit)
              </button>
            </>
          )}
        </div>
      ) : null}
    </div>
  );
}

/** Before (the upload) and after (the cut-out on a checkerboard, or the output) split by the slider; flags and the drawn region on top. */
function Stage(props: {
  item: BatchItem;
  split: number;
  onPreset: boolean;
  box: Box | null;
  onBox: (box: Box) => void;
}) {
  const { item, split, onPreset, box, onBox } = props;
  const cutout = item.meta!.cutout!;
  const stage = useRef<HTMLDivElement>(null);
  const start = useRef<{ x: number; y: number } | null>(null);
  const toPixels = (event: PointerEvent) => {
    const rect = stage.current!.getBoundingClientRect();
    const clamp = (v: number) => Math.min(1, Math.max(0, v));
    return {
      x: Math.round(clamp((event.clientX - rect.left) / rect.width) * cutout.width),
      y: Math.round(clamp((event.clientY - rect.top) / rect.height) * cutout.height),
    };
  };
  const pct = (b: { x: number; y: number; width: number; height: number }) => ({
    left: `${(b.x / cutout.width) * 100}%`,
    top: `${(b.y / cutout.height) * 100}%`,
    width: `${(b.width / cutout.width) * 100}%`,
    height: `${(b.height / cutout.height) * 100}%`,
  });
  return (
    <div
      class="stage"
      ref={stage}
      style={{ aspectRatio: `${cutout.width} / ${cutout.height}` }}
      onPointerDown={(event) => {
        start.current = toPixels(event);
        (event.currentTarget as HTMLElement).setPointerCapture(event.pointerId);
      }}
      onPointerMove={(event) => {
        if (!start.current) return;
        const at = toPixels(event);
        const s = start.current;
        const region = {
          x: Math.min(s.x, at.x),
          y: Math.min(s.y, at.y),
          width: Math.abs(at.x - s.x),
          height: Math.abs(at.y - s.y),
        };
        if (region.width >= 1 && region.height >= 1) onBox(region);
      }}
      onPointerUp={() => {
        start.current = null;
      }}
    >
      <img src={item.inputUrl} alt={`${item.name}, before`} class="layer" draggable={false} />
      <div class="layer after" style={{ clipPath: `inset(0 0 0 ${split}%)` }}>
        <img
          src={onPreset ? item.outputUrl : item.cutoutUrl}
          alt={`${item.name}, after${onPreset ? ', on the preset background' : ''}`}
          class={onPreset ? 'fit' : 'checker'}
          draggable={false}
        />
      </div>
      {(item.quality?.flags ?? [])
        .filter((flag) => flag.bbox)
        .map((flag) => (
          <div key={flag.code} class="flag-box" style={pct(flag.bbox!)} title={flag.label}>
            <span>{flag.label}</span>
          </div>
        ))}
      {box ? <div class="region-box" style={pct(box)} aria-hidden="true" /> : null}
    </div>
  );
}

function ReportForm(props: {
  cutout: { width: number; height: number };
  box: Box | null;
  onBox: (box: Box) => void;
  reason: Reason;
  onReason: (reason: Reason) => void;
  busy: boolean;
  error: Shown | null;
  onSubmit: () => void;
}) {
  const { cutout, box, onBox, reason, onReason, busy, error, onSubmit } = props;
  const b = box ?? { x: 0, y: 0, width: 0, height: 0 };
  const field = (key: keyof Box, label: string, max: number) => (
    <>
      <label for={`region-${key}`}>{label}</label>
      <input
        id={`region-${key}`}
        type="number"
        min={key === 'width' || key === 'height' ? 1 : 0}
        max={max}
        value={box ? b[key] : ''}
        onInput={(e) => onBox({ ...b, [key]: Number(e.currentTarget.value) })}
      />
    </>
  );
  return (
    <form
      class="panel"
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit();
      }}
    >
      <h2>Report a problem</h2>
      <p class="hint">
        Drag on the picture to mark where it is wrong, closely around the wrong part, or type the region in cut-out
        pixels ({cutout.width}×{cutout.height}). The pixel check compares your region with the result and refunds the
        credit when it agrees; a box mostly over parts that are right can be refused.
      </p>
      <div class="fields region">
        {field('x', 'X', cutout.width - 1)}
        {field('y', 'Y', cutout.height - 1)}
        {field('width', 'Width', cutout.width)}
        {field('height', 'Height', cutout.height)}
      </div>
      <label for="reason">Reason</label>
      <select id="reason" value={reason} onChange={(e) => onReason(e.currentTarget.value as Reason)}>
        {REASONS.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        Report problem
      </button>
    </form>
  );
}
