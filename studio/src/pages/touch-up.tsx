// Touch-up: erase and restore brushes painted over a finished photo's cut-out on its checkerboard. Strokes are
// shown as they are painted (the brush's discs: erase clears them, restore brings the photo back there) and
// kept here until Save sends them; the server then snaps each stroke to the photo's edges, and the saved
// cut-out replaces the preview. Undo and Redo step through the strokes not yet saved; Revert brings back the
// model's cut-out. Pointer events, so a mouse, a pen and a finger paint alike; with the keyboard, the arrows
// move the brush over the picture and Space paints a dab.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { BatchItem, FullBatch, TouchUpStroke } from '@matte/client';
import { client } from '../api.ts';
import { ErrorNote, useAction } from '../ui.tsx';

type Mode = TouchUpStroke['mode'];
type Point = [number, number];
const MAX_SIZE = 1000;
/** Points a request may carry (the API's limit): a longer set of strokes is saved in several requests. */
const MAX_POINTS = 10_000;

/** Loads an image the page may draw (same origin: the session cookie reaches it). */
function loadImage(src: string): Promise<HTMLImageElement> {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error(`The picture ${src} could not be loaded.`));
    img.src = src;
  });
}

/** Paints one stroke (or its newest segment, from `from`) on the canvas: the brush's discs along its path. */
function paint(ctx: CanvasRenderingContext2D, photo: HTMLImageElement | null, stroke: TouchUpStroke, from = 0) {
  const { width, height } = ctx.canvas;
  // What the stroke covers, as an opaque shape; pixel centres are at +0.5 on a canvas.
  const shape = (target: CanvasRenderingContext2D) => {
    target.fillStyle = target.strokeStyle = '#000';
    target.lineWidth = stroke.size;
    target.lineCap = target.lineJoin = 'round';
    const points = stroke.points.slice(Math.max(0, from - 1));
    target.beginPath();
    if (points.length === 1) {
      target.arc(points[0][0] + 0.5, points[0][1] + 0.5, stroke.size / 2, 0, Math.PI * 2);
      target.fill();
      return;
    }
    points.forEach(([x, y], i) => (i ? target.lineTo(x + 0.5, y + 0.5) : target.moveTo(x + 0.5, y + 0.5)));
    target.stroke();
  };
  if (stroke.mode === 'erase') {
    ctx.save();
    ctx.globalCompositeOperation = 'destination-out';
    shape(ctx);
    ctx.restore();
    return;
  }
  if (!photo) return;
  // Restore: the photo, drawn through the stroke's shape.
  const layer = document.createElement('canvas');
  layer.width = width;
  layer.height = height;
  const l = layer.getContext('2d')!;
  shape(l);
  l.globalCompositeOperation = 'source-in';
  l.drawImage(photo, 0, 0, width, height);
  ctx.drawImage(layer, 0, 0);
}

export function TouchUpPanel({
  batch,
  item,
  onBatch,
}: {
  batch: FullBatch;
  item: BatchItem;
  /** The batch as a touch-up answered it: shown without reading it again. */
  onBatch: (batch: FullBatch) => void;
}) {
  const cutout = item.meta!.cutout!;
  const long = Math.max(cutout.width, cutout.height);
  const [mode, setMode] = useState<Mode>('erase');
  const [size, setSize] = useState(() => Math.max(4, Math.min(MAX_SIZE, Math.round(long / 25))));
  const [snap, setSnap] = useState(true);
  // The strokes painted and not saved, and those undone (for Redo): one state, so that the shortcuts' handler,
  // registered once, changes it from what it is (not from what it was when the handler was made).
  const [edits, setEdits] = useState<{ done: TouchUpStroke[]; undone: TouchUpStroke[] }>({ done: [], undone: [] });
  const strokes = edits.done;
  const [cursor, setCursor] = useState<Point>([Math.round(cutout.width / 2), Math.round(cutout.height / 2)]);
  const [hover, setHover] = useState<Point | null>(null);
  const [images, setImages] = useState<{ cutout: HTMLImageElement; photo: HTMLImageElement } | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const canvas = useRef<HTMLCanvasElement>(null);
  const active = useRef<TouchUpStroke | null>(null);
  const sizeMax = Math.min(MAX_SIZE, long);

  // The cut-out as saved (its rev in the URL) and the photo it was cut from.
  useEffect(() => {
    let gone = false;
    setImages(null);
    Promise.all([loadImage(item.cutoutUrl!), loadImage(item.inputUrl)]).then(
      ([c, p]) => !gone && setImages({ cutout: c, photo: p }),
      (err: Error) => !gone && setLoadError(err.message),
    );
    return () => {
      gone = true;
    };
  }, [item.cutoutUrl, item.inputUrl]);

  // The whole picture again: the saved cut-out, then every stroke not yet saved.
  const redraw = (list: TouchUpStroke[]) => {
    const ctx = canvas.current?.getContext('2d');
    if (!ctx || !images) return;
    ctx.clearRect(0, 0, cutout.width, cutout.height);
    ctx.drawImage(images.cutout, 0, 0, cutout.width, cutout.height);
    for (const stroke of list) paint(ctx, images.photo, stroke);
  };
  useEffect(() => redraw(strokes), [images, strokes]);

  const commit = (stroke: TouchUpStroke) => setEdits((e) => ({ done: [...e.done, stroke], undone: [] }));
  const clear = () => setEdits({ done: [], undone: [] });
  const undo = () => {
    setEdits((e) => (e.done.length ? { done: e.done.slice(0, -1), undone: [...e.undone, e.done.at(-1)!] } : e));
    setStatus('Stroke undone.');
  };
  const redo = () => {
    setEdits((e) => (e.undone.length ? { done: [...e.done, e.undone.at(-1)!], undone: e.undone.slice(0, -1) } : e));
    setStatus('Stroke redone.');
  };
  const resize = (next: (size: number) => number) =>
    setSize((now) => Math.max(1, Math.min(sizeMax, Math.round(next(now)))));

  const [save, saveError, saving] = useAction(async () => {
    if (!strokes.length) return;
    // In requests of at most MAX_POINTS points, strokes in order.
    let batchOf: TouchUpStroke[] = [];
    let points = 0;
    const sends: TouchUpStroke[][] = [];
    for (const stroke of strokes) {
      if (points + stroke.points.length > MAX_POINTS && batchOf.length) {
        sends.push(batchOf);
        batchOf = [];
        points = 0;
      }
      batchOf.push(stroke);
      points += stroke.points.length;
    }
    sends.push(batchOf);
    let answer: FullBatch | null = null;
    for (const part of sends) answer = await client.touchUp(batch.id, item.id, { strokes: part, snap });
    clear();
    setStatus('Saved: the touched-up cut-out is the photo’s now.');
    if (answer) onBatch(answer);
  });
  const [revert, revertError, reverting] = useAction(async () => {
    const answer = await client.revertTouchUp(batch.id, item.id);
    clear();
    setStatus('Back to the model’s cut-out.');
    onBatch(answer);
  });

  // Shortcuts while the panel is shown: [ and ] for the brush size, Ctrl-Z and Ctrl-Shift-Z (or Ctrl-Y) to undo
  // and redo; not while typing in a field.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName) && (target as HTMLInputElement).type !== 'range')
        return;
      const key = event.key.toLowerCase();
      if ((event.ctrlKey || event.metaKey) && (key === 'z' || key === 'y')) {
        event.preventDefault();
        if (key === 'y' || event.shiftKey) redo();
        else undo();
      } else if (event.key === '[') resize((size) => size - Math.max(1, size * 0.15));
      else if (event.key === ']') resize((size) => size + Math.max(1, size * 0.15));
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const toPixels = (event: PointerEvent): Point => {
    const rect = canvas.current!.getBoundingClientRect();
    return [
      Math.round(((event.clientX - rect.left) / rect.width) * cutout.width * 10) / 10,
      Math.round(((event.clientY - rect.top) / rect.height) * cutout.height * 10) / 10,
    ];
  };
  const extend = (points: Point[]) => {
    const stroke = active.current;
    const ctx = canvas.current?.getContext('2d');
    if (!stroke || !ctx) return;
    const from = stroke.points.length;
    stroke.points.push(...points);
    paint(ctx, images?.photo ?? null, stroke, from);
  };
  const percent = (v: number, of: number) => `${(v / of) * 100}%`;
  const ring = (at: Point) => ({
    left: percent(at[0] - size / 2, cutout.width),
    top: percent(at[1] - size / 2, cutout.height),
    width: percent(size, cutout.width),
    height: percent(size, cutout.height),
  });

  return (
    <section class="panel touch-up" id="touch-up" aria-labelledby="touch-up-title">
      <h2 id="touch-up-title">Touch up</h2>
      <p class="hint">
        Paint over what is wrong: Erase takes it out, Restore brings the photo back. A broad stroke is fine: on Save
        each stroke snaps to the photo’s edges, so what it spills onto stays as it was. Free: no credit is used.
        {item.touchUp
          ? ` Touched up (${item.touchUp.strokes} stroke${item.touchUp.strokes === 1 ? '' : 's'} saved).`
          : ''}
      </p>
      <div class="touch-tools">
        <fieldset>
          <legend>Brush</legend>
          {(['erase', 'restore'] as const).map((m) => (
            <label class="pick" key={m}>
              <input type="radio" name="brush" value={m} checked={mode === m} onChange={() => setMode(m)} />
              {m === 'erase' ? 'Erase' : 'Restore'}
            </label>
          ))}
        </fieldset>
        <div>
          <label for="brush-size">
            Brush size: {size} px <span class="hint">([ and ])</span>
          </label>
          <input
            id="brush-size"
            type="range"
            min={1}
            max={sizeMax}
            value={size}
            onInput={(e) => {
              const value = Number(e.currentTarget.value);
              resize(() => value);
            }}
          />
        </div>
        <label class="pick">
          <input type="checkbox" checked={snap} onChange={(e) => setSnap(e.currentTarget.checked)} />
          Snap to edges
        </label>
      </div>
      <ErrorNote error={loadError ? { message: loadError } : null} />
      <div class="touch-stage checker" style={{ aspectRatio: `${cutout.width} / ${cutout.height}` }}>
        <canvas
          ref={canvas}
          width={cutout.width}
          height={cutout.height}
          tabIndex={0}
          data-ready={images ? 'true' : undefined}
          role="application"
          aria-roledescription="drawing area"
          aria-label={`Cut-out of ${item.name} to paint on with the ${mode} brush. Drag to paint; or move the brush with the arrow keys and press Space to paint a dab.`}
          onPointerDown={(event) => {
            if (!images) return;
            event.preventDefault();
            (event.currentTarget as HTMLElement).setPointerCapture(event.pointerId);
            active.current = { mode, size, points: [] };
            extend([toPixels(event)]);
          }}
          onPointerMove={(event) => {
            setHover(toPixels(event));
            if (!active.current) return;
            const events = event.getCoalescedEvents?.() ?? [event];
            extend(events.map((e) => toPixels(e)));
          }}
          onPointerUp={() => {
            const stroke = active.current;
            active.current = null;
            if (stroke?.points.length) commit(stroke);
          }}
          onPointerCancel={() => {
            active.current = null;
            redraw(strokes);
          }}
          onPointerLeave={() => setHover(null)}
          onKeyDown={(event) => {
            const step = Math.max(1, Math.round(size / 2));
            const moves: Record<string, Point> = {
              ArrowLeft: [-step, 0],
              ArrowRight: [step, 0],
              ArrowUp: [0, -step],
              ArrowDown: [0, step],
            };
            const move = moves[event.key];
            if (move) {
              event.preventDefault();
              setCursor(([x, y]) => [
                Math.min(cutout.width - 1, Math.max(0, x + move[0])),
                Math.min(cutout.height - 1, Math.max(0, y + move[1])),
              ]);
            } else if (event.key === ' ' || event.key === 'Enter') {
              event.preventDefault();
              commit({ mode, size, points: [cursor] });
              setStatus(`${mode === 'erase' ? 'Erased' : 'Restored'} a dab at ${cursor[0]}, ${cursor[1]}.`);
            }
          }}
        />
        <div class="brush-ring keyboard" style={ring(cursor)} aria-hidden="true" />
        {hover ? <div class="brush-ring" style={ring(hover)} aria-hidden="true" /> : null}
      </div>
      <div class="touch-actions">
        <button type="button" class="secondary" onClick={undo} disabled={!strokes.length} title="Ctrl-Z">
          Undo
        </button>
        <button type="button" class="secondary" onClick={redo} disabled={!edits.undone.length} title="Ctrl-Shift-Z">
          Redo
        </button>
        <button type="button" onClick={() => void save()} disabled={saving || !strokes.length}>
          Save{strokes.length ? ` (${strokes.length} stroke${strokes.length === 1 ? '' : 's'})` : ''}
        </button>
        <button
          type="button"
          class="quiet"
          onClick={() => void revert()}
          disabled={reverting || (!item.touchUp && !strokes.length)}
        >
          Revert to the model’s cut-out
        </button>
      </div>
      <ErrorNote error={saveError ?? revertError} />
      <p role="status" class="hint">
        {saving ? 'Saving…' : status}
      </p>
    </section>
  );
}
