// The pixel check behind a report: a seller marks a region of a cut-out and says what is wrong with
// it; the check looks at the cut-out's alpha and the photo's own colours (a cut-out keeps the source
// colours under its alpha) and accepts the report only when the pixels agree. No model call.
//   background-kept  some part of the region (the whole, or a window of half its width and height or more) has
//                    kept pixels of the background's colours that join the background the cut-out dropped (or
//                    the frame's edge) and reach two pixels or more in from the cut: kept background, not the
//                    blend of colours every correct edge has
//   hole             the region holds a transparent area enclosed by subject whose colours are not the background's
//   missing-part     the region's transparent pixels have colours unlike the background and touch the subject
//   extra-object     the region's opaque pixels belong to a part apart from the main subject
//   rough-edges      the subject's edge in the region is ragged (specks and notches) compared with the
//                    same edge smoothed
// The background's colours are estimated from the photo's outer ring where the cut-out is transparent.
import type { BBox } from '../../domain/batch.schemas.ts';
import { boundary, components, dilate } from '../../imaging/raster.mjs';
import { boxMean } from '../../imaging/edge-refine.mjs';
import { colourModels, looksLikeBackground, looksLikeSubject, type ColourModels } from './colour-model.ts';
import type { ClaimReason } from '../../domain/batch.schemas.ts';

export type { ClaimReason };
/** A cut pixel with at least this alpha (of 255) is one the model half kept. */
const DOUBT_FROM = 26;
/** The check works on the cut-out reduced to at most this many pixels on its long edge. */
export const CLAIM_GRID_EDGE = 512;

export interface ClaimImage {
  width: number;
  height: number;
  /** width x height x 4, straight alpha. */
  rgba: Uint8Array;
}

export interface ClaimVerdict {
  accepted: boolean;
  /** How sure the check is of its verdict, 0..1. */
  confidence: number;
  evidence: string;
  metrics: Record<string, number>;
}

/**
 * What each reason needs to be accepted. background-kept and missing-part: fitted on the calibration set's
 * claims (tools/calibration/claims-calibration.ts: true claims from the model's own mistakes, with their tight box and a
 * seller's looser one, false ones where it is right; composites and real photos), the bars that accept the most
 * true claims while rejecting 97% of the false ones (docs/research/quality-history.md has the held-out figures).
 * background-kept's bars hold in any of the region's windows (WINDOW_SCALES): a seller's box is looser than the
 * wrong part, and the kept background in it is a share of the box that the correct pixels around it dilute; only
 * kept pixels at the cut count as background-like (backgroundLikeAtCut), or a box inside the product is taken for
 * kept background wherever the product has the backdrop's colours; and some of them must lie two pixels or more in
 * from the cut (`deep`): along a correct edge the kept pixels blend the two sides' colours, and on real photos a
 * box across such an edge was accepted as kept background a third of the time (51 of 140) on colour alone.
 * missing-part has a second
 * way in: most of the region cut away (doubtCut) and enough of that half kept by the model (doubt), for parts
 * whose colours pass for the background's. The other reasons' bars are the hand-set ones (bench/claims-eval.ts);
 * extra-object's parts apart must also add up to 0.5% of the main subject's size, so that a few stray pixels
 * kept in the background (a real photo's clutter leaves some) are no other object: on the calibration set they
 * were 9 of the 16 false extra-object claims accepted.
 */
const NEED = {
  backgroundKept: { opaque: 0.05, backgroundLike: 0.02, deep: 0.005 },
  hole: { enclosed: 0.04, notBackground: 0.6 },
  missing: { transparent: 0.05, notBackground: 0.1, doubtCut: 0.4, doubt: 0.15 },
  extraObject: { apart: 0.5, leastOfSubject: 0.005 },
  rough: { raggedness: 1.35, disagreement: 0.17 },
};

const pct = (v: number) => `${Math.round(v * 100)}%`;
/** A percentage to a tenth, for shares under a few per cent. */
const pctFine = (v: number) => `${Math.round(v * 1000) / 10}%`;
const r3 = (v: number) => Math.round(v * 1000) / 1000;
const r4 = (v: number) => Math.round(v * 10000) / 10000;
/** Confidence from how far a measure is past (or short of) its bar, relative to the bar. */
const confidenceFrom = (value: number, bar: number) =>
  Math.round(Math.min(0.99, 0.5 + Math.abs(value - bar) / (2 * Math.max(bar, 1 - bar, 1e-6))) * 100) / 100;

/** A region of the reduced cut-out: columns x0..x1-1, rows y0..y1-1. */
interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * The windows a background-kept claim is judged on, as shares of the region's width and height: the region
 * itself, then windows of 80%, 65% and 50% of it at its corners, the middles of its sides and its centre.
 */
const WINDOW_SCALES = [1, 0.8, 0.65, 0.5] as const;

/** The region's windows (WINDOW_SCALES), each with its scale. */
function claimWindows(r: Rect): (Rect & { scale: number })[] {
  const out: (Rect & { scale: number })[] = [];
  const W = r.x1 - r.x0;
  const H = r.y1 - r.y0;
  for (const scale of WINDOW_SCALES) {
    const w = Math.max(1, Math.round(W * scale));
    const h = Math.max(1, Math.round(H * scale));
    const xs = scale === 1 ? [r.x0] : [r.x0, Math.round(r.x0 + (W - w) / 2), r.x1 - w];
    const ys = scale === 1 ? [r.y0] : [r.y0, Math.round(r.y0 + (H - h) / 2), r.y1 - h];
    for (const y0 of ys) for (const x0 of xs) out.push({ x0, y0, x1: x0 + w, y1: y0 + h, scale });
  }
  return out;
}

/**
 * A background-kept window's measures: the share of it kept, the share of those kept pixels with the background's
 * colours (in pieces joining the cut), and the share of them two pixels or more in from the cut.
 */
export interface KeptWindow {
  scale: number;
  opaqueShare: number;
  backgroundLikeShare: number;
  deepShare: number;
}

/**
 * Judges a claim whose region is given in the full cut-out's pixels (`size`) on the reduced cut-out.
 */
export function judgeClaimAt(
  img: ClaimImage,
  size: { width: number; height: number },
  reason: ClaimReason,
  region: BBox,
): ClaimVerdict {
  const sx = img.width / size.width;
  const sy = img.height / size.height;
  const scaled = {
    x: Math.floor(region.x * sx),
    y: Math.floor(region.y * sy),
    width: Math.max(1, Math.ceil(region.width * sx)),
    height: Math.max(1, Math.ceil(region.height * sy)),
  };
  return judgeClaim(img, reason, scaled);
}

/**
 * @param img the cut-out, already reduced (see CLAIM_GRID_EDGE)
 * @param region the marked region in the reduced image's pixels (clipped to it)
 */
export function judgeClaim(img: ClaimImage, reason: ClaimReason, region: BBox): ClaimVerdict {
  const { width: w, height: h } = img;
  const n = w * h;
  const opaque = opaquePixels(img);
  const rect = clip(img, region);
  const { x0, y0, x1, y1 } = rect;
  const global = colourModels(img.rgba, 4, opaque, w, h);
  // background-kept judges each window against the colours around it (keptWindows), not the region's.
  if (reason === 'background-kept') return backgroundKeptVerdict(keptWindows(img, opaque, global, rect));
  const model = localColours(img, opaque, global, rect);
  const each = (fn: (i: number) => void) => {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) fn(y * w + x);
  };
  const area = (x1 - x0) * (y1 - y0);
  let opaqueIn = 0;
  each((i) => (opaqueIn += opaque[i]));
  const transparentIn = area - opaqueIn;

  switch (reason) {
    case 'hole': {
      const transparent = new Uint8Array(n);
      for (let i = 0; i < n; i++) transparent[i] = opaque[i] ? 0 : 1;
      const gaps = components(transparent, w, h);
      let enclosed = 0;
      let notBg = 0;
      each((i) => {
        const k = gaps.label[i];
        if (!k || gaps.touchesBorder[k]) return;
        enclosed++;
        if (!looksLikeBackground(model, i)) notBg++;
      });
      const enclosedShare = enclosed / area;
      const share = enclosed ? notBg / enclosed : 0;
      return twoBars(
        enclosedShare,
        NEED.hole.enclosed,
        share,
        NEED.hole.notBackground,
        { enclosedShare, notBackgroundShare: share },
        `${pct(enclosedShare)} of the region is transparent and enclosed by the subject, and ${pct(share)} of that has colours unlike the background (${pct(NEED.hole.notBackground)} needed).`,
      );
    }
    case 'missing-part': {
      // Transparent pixels unlike the background, counted only in pieces that touch the subject.
      const candidate = new Uint8Array(n);
      each((i) => {
        if (!opaque[i] && !looksLikeBackground(model, i)) candidate[i] = 1;
      });
      const pieces = components(candidate, w, h);
      const nearSubject = dilate(opaque, w, h, 1);
      const touching = new Set<number>();
      each((i) => {
        if (candidate[i] && nearSubject[i]) touching.add(pieces.label[i]);
      });
      let continuing = 0;
      each((i) => {
        if (candidate[i] && touching.has(pieces.label[i])) continuing++;
      });
      // And what the model half kept there: cut pixels whose alpha is not nothing (26..127).
      let doubt = 0;
      each((i) => {
        const a = img.rgba[i * 4 + 3];
        if (a >= DOUBT_FROM && a < 128) doubt++;
      });
      const transparentShare = transparentIn / area;
      const share = transparentIn ? continuing / transparentIn : 0;
      const doubtShare = transparentIn ? doubt / transparentIn : 0;
      if (
        transparentShare >= NEED.missing.transparent &&
        share < NEED.missing.notBackground &&
        doubtShare >= NEED.missing.doubt
      )
        return {
          accepted: true,
          confidence: confidenceFrom(doubtShare, NEED.missing.doubt),
          evidence: `${pct(transparentShare)} of the region was cut away, and the model half kept ${pct(doubtShare)} of that (${pct(NEED.missing.doubt)} needed): it saw the part, and left it out.`,
          metrics: { transparentShare: r3(transparentShare), subjectLikeShare: r3(share), doubtShare: r3(doubtShare) },
        };
      return twoBars(
        transparentShare,
        NEED.missing.transparent,
        share,
        NEED.missing.notBackground,
        { transparentShare, subjectLikeShare: share, doubtShare },
        `${pct(transparentShare)} of the region was cut away, and ${pct(share)} of that has colours unlike the background and joins the subject (${pct(NEED.missing.notBackground)} needed).`,
      );
    }
    case 'extra-object': {
      const parts = components(opaque, w, h);
      let main = 0;
      for (let k = 1; k < parts.sizes.length; k++) if (!main || parts.sizes[k] > parts.sizes[main]) main = k;
      let apart = 0;
      each((i) => {
        if (opaque[i] && parts.label[i] !== main) apart++;
      });
      const share = opaqueIn ? apart / opaqueIn : 0;
      // A kept speck a pixel or two across is no object a seller can see: the parts apart must add up to a
      // visible share of the main subject's size.
      const least = Math.max(1, Math.ceil(NEED.extraObject.leastOfSubject * (main ? parts.sizes[main] : 0)));
      const visible = apart >= least;
      const accepted = visible && share >= NEED.extraObject.apart;
      return {
        accepted,
        confidence: confidenceFrom(visible ? share : 0, NEED.extraObject.apart),
        evidence: visible
          ? `${pct(share)} of the kept pixels in the region (${apart} px) belong to parts apart from the main subject (${pct(NEED.extraObject.apart)} needed).`
          : `The parts kept apart from the main subject in the region add up to ${apart} px, too few to be an object (${least} px needed: ${NEED.extraObject.leastOfSubject * 100}% of the subject's size).`,
        metrics: { apartShare: r3(share), apartPixels: apart, parts: parts.sizes.length - 1 },
      };
    }
    case 'rough-edges': {
      // Ragged: the edge is much longer than the same edge smoothed. Wrong: along it, the alpha
      // disagrees with the colours (kept pixels of the background's colours, cut pixels of the
      // subject's); a true fine outline (leaves, fur) is ragged too, but its colours agree.
      const smooth = smoothed(opaque, w, h);
      const edge = boundary(opaque, w, h);
      const smoothEdge = boundary(smooth, w, h);
      const band = dilate(edge, w, h, 2);
      let raw = 0;
      let ref = 0;
      let inBand = 0;
      let disagree = 0;
      each((i) => {
        raw += edge[i];
        ref += smoothEdge[i];
        if (!band[i]) return;
        inBand++;
        if (opaque[i] ? looksLikeBackground(model, i) : looksLikeSubject(model, i)) disagree++;
      });
      const raggedness = ref ? raw / ref : raw > 0 ? 10 : 0;
      const disagreement = inBand ? disagree / inBand : 0;
      const accepted = raggedness >= NEED.rough.raggedness && disagreement >= NEED.rough.disagreement;
      return {
        accepted,
        confidence: confidenceFrom(raggedness >= NEED.rough.raggedness ? disagreement : 0, NEED.rough.disagreement),
        evidence: `The edge in the region is ${raggedness.toFixed(2)} times as long as the same edge smoothed (${NEED.rough.raggedness} needed), and ${pct(disagreement)} of the pixels along it are kept or cut against their colours (${pct(NEED.rough.disagreement)} needed).`,
        metrics: {
          raggedness: r3(raggedness),
          disagreement: r3(disagreement),
          edgePixels: raw,
          smoothedEdgePixels: ref,
        },
      };
    }
  }
}

/**
 * background-kept's verdict from its windows' measures (backgroundKeptWindows): accepted when one window passes
 * all three bars, and told from the window nearest to passing them (the region itself first on a tie).
 */
export function backgroundKeptVerdict(windows: KeptWindow[]): ClaimVerdict {
  const { opaque: b1, backgroundLike: b2, deep: b3 } = NEED.backgroundKept;
  const score = (m: KeptWindow) => Math.min(m.opaqueShare / b1, m.backgroundLikeShare / b2, m.deepShare / b3);
  const best = windows.reduce((a, b) => (score(b) > score(a) ? b : a));
  const where =
    best.scale === 1
      ? 'the region'
      : `the part of the region where it shows most (a window ${pct(best.scale)} of its width and height)`;
  const coloured = best.opaqueShare >= b1 && best.backgroundLikeShare >= b2;
  const accepted = coloured && best.deepShare >= b3;
  // What the measures say, where the verdict turns on the third: kept background, or the edge's blend alone.
  const reading = accepted
    ? ': kept background, not only the blend along the edge'
    : coloured
      ? ": what has the background's colours is the blend along the edge, not kept background"
      : '';
  return {
    accepted,
    confidence: confidenceFrom(coloured ? best.deepShare : 0, b3),
    evidence:
      `In ${where}, ${pct(best.opaqueShare)} is kept (${pct(b1)} needed), ${pct(best.backgroundLikeShare)} of the kept ` +
      `pixels have the background's colours (${pct(b2)} needed), and ${pctFine(best.deepShare)} lie two pixels or ` +
      `more in from the cut (${pctFine(b3)} needed)${reading}.`,
    metrics: Object.fromEntries(
      Object.entries({
        opaqueShare: best.opaqueShare,
        backgroundLikeShare: best.backgroundLikeShare,
        deepShare: best.deepShare,
        windowScale: best.scale,
      }).map(([k, v]) => [k, r4(v)]),
    ),
  };
}

/**
 * A verdict on two bars: enough of the region shows the fault (`amount`), and enough of that looks
 * the way the fault would (`share`). Confidence grows with the distance from the share's bar.
 */
function twoBars(
  amount: number,
  amountBar: number,
  share: number,
  shareBar: number,
  metrics: Record<string, number>,
  evidence: string,
): ClaimVerdict {
  return {
    accepted: amount >= amountBar && share >= shareBar,
    confidence: confidenceFrom(amount < amountBar ? 0 : share, shareBar),
    evidence,
    metrics: Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, r3(v)])),
  };
}

/** The region clipped to the image, at least one pixel. */
function clip(img: ClaimImage, region: BBox): Rect {
  const x0 = Math.max(0, Math.min(img.width - 1, region.x));
  const y0 = Math.max(0, Math.min(img.height - 1, region.y));
  return {
    x0,
    y0,
    x1: Math.max(x0 + 1, Math.min(img.width, region.x + region.width)),
    y1: Math.max(y0 + 1, Math.min(img.height, region.y + region.height)),
  };
}

/**
 * background-kept's measures in each of the region's windows (claimWindows), each against the colours around
 * that window. For the fit (tools/calibration/claims-calibration.ts) and the verdict.
 */
function keptWindows(img: ClaimImage, opaque: Uint8Array, global: ColourModels, region: Rect): KeptWindow[] {
  const w = img.width;
  // Kept pixels beside a cut-away one or on the frame's edge (which counts as cut away: kept background often
  // runs out of the photo).
  const rim = boundary(opaque, w, img.height);
  // Within a pixel of the cut: where a correct edge blends the subject's colours with the background's.
  const nearCut = dilate(rim, w, img.height, 1);
  return claimWindows(region).map((win) => {
    const model = localColours(img, opaque, global, win);
    let kept = 0;
    for (let y = win.y0; y < win.y1; y++)
      for (let i = y * w + win.x0, end = y * w + win.x1; i < end; i++) kept += opaque[i];
    const area = (win.x1 - win.x0) * (win.y1 - win.y0);
    const bgLike = backgroundLikeAtCut(img, opaque, rim, nearCut, model, win);
    return {
      scale: win.scale,
      opaqueShare: kept / area,
      backgroundLikeShare: kept ? bgLike.atCut / kept : 0,
      deepShare: kept ? bgLike.deep / kept : 0,
    };
  });
}

/**
 * Kept pixels of the background's colours in the window, counted only in pieces (within the window) that border
 * a cut-away pixel or the frame's edge: kept background joins the background the cut-out dropped, while a part of the product in
 * the backdrop's colours (a white label, a white product on white) is surrounded by kept pixels. Counting every
 * such pixel, boxes inside the subject were taken for kept background (89-94% of those false claims refused).
 * `deep`: those of them outside `nearCut`, two pixels or more in from the cut.
 */
function backgroundLikeAtCut(
  img: ClaimImage,
  opaque: Uint8Array,
  rim: Uint8Array,
  nearCut: Uint8Array,
  model: ColourModels,
  win: Rect,
): { atCut: number; deep: number } {
  const w = img.width;
  const ww = win.x1 - win.x0;
  const wh = win.y1 - win.y0;
  const on = new Uint8Array(ww * wh);
  for (let y = 0; y < wh; y++)
    for (let x = 0; x < ww; x++) {
      const i = (y + win.y0) * w + x + win.x0;
      if (opaque[i] && looksLikeBackground(model, i)) on[y * ww + x] = 1;
    }
  const parts = components(on, ww, wh);
  const touches = new Uint8Array(parts.sizes.length);
  for (let y = 0; y < wh; y++)
    for (let x = 0; x < ww; x++) {
      const k = parts.label[y * ww + x];
      if (!k || touches[k]) continue;
      if (rim[(y + win.y0) * w + x + win.x0]) touches[k] = 1;
    }
  let atCut = 0;
  let deep = 0;
  for (let y = 0; y < wh; y++)
    for (let x = 0; x < ww; x++) {
      const k = parts.label[y * ww + x];
      if (!k || !touches[k]) continue;
      atCut++;
      if (!nearCut[(y + win.y0) * w + x + win.x0]) deep++;
    }
  return { atCut, deep };
}

/** background-kept's measures in each window of a region given in the reduced image's pixels (for the fit). */
export function backgroundKeptWindows(img: ClaimImage, region: BBox): KeptWindow[] {
  const opaque = opaquePixels(img);
  return keptWindows(img, opaque, colourModels(img.rgba, 4, opaque, img.width, img.height), clip(img, region));
}

/** The cut-out's kept pixels (alpha at least one half). */
function opaquePixels(img: ClaimImage): Uint8Array {
  const n = img.width * img.height;
  const opaque = new Uint8Array(n);
  for (let i = 0; i < n; i++) opaque[i] = img.rgba[i * 4 + 3] >= 128 ? 1 : 0;
  return opaque;
}

/** Fewer pixels than this around the region: the colour model is the whole photo's. */
const MIN_LOCAL_PIXELS = 40;

/**
 * Colours around the region, outside it: the background there (transparent pixels) and the subject
 * there (opaque pixels). A photo's background changes across the frame (a printed backdrop, a shadow,
 * a garden), so what "matches the background" is judged against the background beside the region.
 * Where the neighbourhood has too few pixels of a kind, that model is the whole photo's (`global`).
 */
function localColours(img: ClaimImage, opaque: Uint8Array, global: ColourModels, r: Rect): ColourModels {
  const { width: w, height: h } = img;
  const pad = Math.max(8, Math.round(Math.max(r.x1 - r.x0, r.y1 - r.y0) / 2));
  const cx0 = Math.max(0, r.x0 - pad),
    cy0 = Math.max(0, r.y0 - pad),
    cx1 = Math.min(w, r.x1 + pad),
    cy1 = Math.min(h, r.y1 + pad);
  const bin = global.bin;
  const background = new Float32Array(512);
  const subject = new Float32Array(512);
  let nb = 0;
  let ns = 0;
  for (let y = cy0; y < cy1; y++) {
    const inside = y >= r.y0 && y < r.y1;
    for (let x = cx0; x < cx1; x++) {
      if (inside && x >= r.x0 && x < r.x1) continue;
      const i = y * w + x;
      if (opaque[i]) {
        subject[bin[i]]++;
        ns++;
      } else {
        background[bin[i]]++;
        nb++;
      }
    }
  }
  const normalised = (hist: Float32Array, n: number) => hist.map((v) => v / n);
  return {
    bin,
    background: nb >= MIN_LOCAL_PIXELS ? normalised(background, nb) : global.background,
    subject: ns >= MIN_LOCAL_PIXELS ? normalised(subject, ns) : global.subject,
  };
}

/** The set after a 5x5 majority vote: specks and notches of a pixel or two vanish, true shapes stay. */
function smoothed(set: Uint8Array, w: number, h: number): Uint8Array {
  // The window's mean (clipped at the borders) above one half: more than half its pixels are in the set.
  const share = boxMean(set, w, h, 2);
  const out = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) out[i] = share[i] > 0.5 ? 1 : 0;
  return out;
}
