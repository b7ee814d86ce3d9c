// The model's mask reduced to the edge refinement's grid (edge-refine.mjs refineGrid): an area
// average, each grid cell the mean of the mask area it covers, pixels cut by a cell's border weighted
// by the share inside it, in integer arithmetic. The edge refinement's defaults were chosen on masks
// reduced this way (edge-refine.mjs REFINE_DEFAULTS).

/**
 * For each of the `d` cells of an axis of `n` source pixels (d <= n): the first source pixel it covers,
 * and each covered pixel's weight, its overlap in units of 1/d pixel (a cell's weights sum to n).
 * @param {number} n @param {number} d
 */
export function areaAxis(n, d) {
  const first = new Int32Array(d);
  const offset = new Int32Array(d + 1);
  /** @type {number[]} */
  const weight = [];
  for (let i = 0; i < d; i++) {
    const lo = i * n;
    const hi = lo + n;
    first[i] = Math.floor(lo / d);
    offset[i] = weight.length;
    for (let k = first[i]; k * d < hi; k++) weight.push(Math.min((k + 1) * d, hi) - Math.max(k * d, lo));
  }
  offset[d] = weight.length;
  return { first, offset, weight: Int32Array.from(weight) };
}

/**
 * An image `sw` x `sh` of `channels` interleaved 8-bit values a pixel (one unless given) reduced to
 * `dw` x `dh` (no larger on either axis) by area averages, rounded half up.
 * @param {Uint8Array} src @param {number} sw @param {number} sh @param {number} dw @param {number} dh
 * @param {number} [channels]
 * @returns {Uint8Array}
 */
export function reduceArea(src, sw, sh, dw, dh, channels = 1) {
  if (!(dw >= 1 && dh >= 1 && dw <= sw && dh <= sh) || src.length < sw * sh * channels)
    throw new RangeError(`reduceArea: cannot reduce ${sw}x${sh} to ${dw}x${dh}`);
  const xs = areaAxis(sw, dw);
  const ys = areaAxis(sh, dh);
  const rowOut = dw * channels;
  // Across first: a source row's cells, each at most 255 * sw; then down, each output row the weighted
  // sum of its source rows. A source row cut by a cell border serves two output rows in a row: it is
  // summed across once, and kept for the next. Row by row, not the whole table at once (1024² to 667²:
  // 12 ms, most of it the table's 5.5 MB of fresh pages, against 4 ms); each cell's sum takes its terms in
  // the same order either way, so the same bytes.
  const across = new Float64Array(rowOut);
  let acrossRow = -1;
  const { first, offset, weight } = xs;
  /** @param {number} y */
  const sumAcross = (y) => {
    const row = y * sw * channels;
    if (channels === 3) {
      // RGB, the check's colours: the three sums in one walk (half the time of the general loop).
      for (let x = 0, o = 0; x < dw; x++, o += 3) {
        let r = 0;
        let g = 0;
        let b = 0;
        for (let j = offset[x], k = row + first[x] * 3, end = offset[x + 1]; j < end; j++, k += 3) {
          const wj = weight[j];
          r += src[k] * wj;
          g += src[k + 1] * wj;
          b += src[k + 2] * wj;
        }
        across[o] = r;
        across[o + 1] = g;
        across[o + 2] = b;
      }
      return;
    }
    if (channels === 1) {
      for (let x = 0, j = 0; x < dw; x++) {
        let sum = 0;
        for (let k = row + first[x], end = offset[x + 1]; j < end; j++, k++) sum += src[k] * weight[j];
        across[x] = sum;
      }
      return;
    }
    for (let x = 0; x < dw; x++) {
      for (let c = 0; c < channels; c++) {
        let sum = 0;
        for (let j = offset[x], k = row + first[x] * channels + c; j < offset[x + 1]; j++, k += channels)
          sum += src[k] * weight[j];
        across[x * channels + c] = sum;
      }
    }
  };
  const out = new Uint8Array(rowOut * dh);
  const whole = sw * sh;
  const half = Math.floor(whole / 2);
  const sums = new Float64Array(rowOut);
  for (let y = 0; y < dh; y++) {
    sums.fill(0);
    for (let j = ys.offset[y], k = ys.first[y]; j < ys.offset[y + 1]; j++, k++) {
      if (k !== acrossRow) {
        sumAcross(k);
        acrossRow = k;
      }
      const wj = ys.weight[j];
      for (let x = 0; x < rowOut; x++) sums[x] += across[x] * wj;
    }
    for (let x = 0, o = y * rowOut; x < rowOut; x++, o++) out[o] = Math.floor((sums[x] + half) / whole);
  }
  return out;
}

/**
 * A square image of interleaved 8-bit pixels (`channels` a pixel) reduced by a whole `factor` on both
 * axes: each output pixel the mean of the factor x factor block it covers, rounded half up. The same
 * figures as reduceArea where the factor is whole, in under half its time (one pass, integer sums: 1.8 ms
 * against 3.9 ms for a 1024² mask to 256² here).
 * @param {Uint8Array} src @param {number} size @param {number} channels @param {number} factor
 * @returns {Uint8Array}
 */
export function reduceBlocks(src, size, channels, factor) {
  if (!(Number.isInteger(factor) && factor >= 1 && size % factor === 0) || src.length < size * size * channels)
    throw new RangeError(`reduceBlocks: cannot reduce ${size}² by ${factor}`);
  const edge = size / factor;
  const rowWidth = edge * channels;
  const out = new Uint8Array(edge * rowWidth);
  const sums = new Uint32Array(rowWidth);
  const whole = factor * factor;
  const half = whole >> 1;
  for (let gy = 0; gy < edge; gy++) {
    sums.fill(0);
    for (let dy = 0; dy < factor; dy++) {
      const row = (gy * factor + dy) * size * channels;
      // Each source byte adds to its cell's channel: a cell's `factor` pixels are summed, then stored.
      if (channels === 3) {
        for (let gx = 0, p = row, o = 0; gx < edge; gx++, o += 3) {
          let r = 0;
          let g = 0;
          let b = 0;
          for (let dx = 0; dx < factor; dx++, p += 3) {
            r += src[p];
            g += src[p + 1];
            b += src[p + 2];
          }
          sums[o] += r;
          sums[o + 1] += g;
          sums[o + 2] += b;
        }
      } else if (channels === 1) {
        for (let gx = 0, p = row; gx < edge; gx++) {
          let v = 0;
          for (let dx = 0; dx < factor; dx++, p++) v += src[p];
          sums[gx] += v;
        }
      } else {
        for (let x = 0, p = row; x < size; x++) {
          const o = ((x / factor) | 0) * channels;
          for (let c = 0; c < channels; c++, p++) sums[o + c] += src[p];
        }
      }
    }
    for (let k = 0, o = gy * rowWidth; k < rowWidth; k++, o++) out[o] = Math.floor((sums[k] + half) / whole);
  }
  return out;
}
