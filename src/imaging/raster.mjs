// Raster operations on one-channel grids, the one home of each: connected components, dilation, the
// boundary of a set, and boxes scaled between grids. Used by the edge refinement (in the cut-out writer's
// worker threads, so plain JavaScript), the quality check, the report check and the calibration tool.

/** @typedef {{ x: number, y: number, width: number, height: number }} Box */

/**
 * @typedef {object} Components
 * @property {Int32Array} label component number per pixel (0 = not in the set, 1.. = component)
 * @property {number[]} sizes pixel count per component; index 0 unused
 * @property {boolean[]} touchesBorder whether the component touches the grid border; index 0 unused
 * @property {(Box | null)[]} boxes each component's box; index 0 unused
 */

/**
 * 4-connected components of the pixels where `inSet` is non-zero.
 * @param {Uint8Array} inSet @param {number} width @param {number} height
 * @returns {Components}
 */
export function components(inSet, width, height) {
  const label = new Int32Array(width * height);
  /** @type {number[]} */
  const sizes = [0];
  /** @type {boolean[]} */
  const touchesBorder = [false];
  /** @type {(Box | null)[]} */
  const boxes = [null];
  const stack = new Int32Array(width * height);
  for (let start = 0; start < inSet.length; start++) {
    if (!inSet[start] || label[start]) continue;
    const n = sizes.length;
    let top = 0;
    stack[top++] = start;
    label[start] = n;
    let size = 0;
    let minX = width,
      minY = height,
      maxX = -1,
      maxY = -1;
    while (top) {
      const i = stack[--top];
      const y = (i / width) | 0;
      const x = i - y * width;
      size++;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
      let j = i - 1;
      if (x > 0 && inSet[j] && !label[j]) {
        label[j] = n;
        stack[top++] = j;
      }
      j = i + 1;
      if (x < width - 1 && inSet[j] && !label[j]) {
        label[j] = n;
        stack[top++] = j;
      }
      j = i - width;
      if (y > 0 && inSet[j] && !label[j]) {
        label[j] = n;
        stack[top++] = j;
      }
      j = i + width;
      if (y < height - 1 && inSet[j] && !label[j]) {
        label[j] = n;
        stack[top++] = j;
      }
    }
    sizes.push(size);
    touchesBorder.push(minX === 0 || minY === 0 || maxX === width - 1 || maxY === height - 1);
    boxes.push({ x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 });
  }
  return { label, sizes, touchesBorder, boxes };
}

/**
 * The set grown by `radius` pixels in every direction (a square structuring element, clipped at the grid's
 * border), in two 1-D passes: the cost does not grow with the radius.
 * @param {Uint8Array} inSet @param {number} width @param {number} height @param {number} radius
 * @returns {Uint8Array} 1 where grown
 */
export function dilate(inSet, width, height, radius) {
  const rows = new Uint8Array(inSet.length);
  for (let y = 0; y < height; y++) {
    let last = -Infinity;
    // Left to right: distance to the last set pixel; then right to left.
    for (let x = 0; x < width; x++) {
      if (inSet[y * width + x]) last = x;
      if (x - last <= radius) rows[y * width + x] = 1;
    }
    last = Infinity;
    for (let x = width - 1; x >= 0; x--) {
      if (inSet[y * width + x]) last = x;
      if (last - x <= radius) rows[y * width + x] = 1;
    }
  }
  const out = new Uint8Array(inSet.length);
  for (let x = 0; x < width; x++) {
    let last = -Infinity;
    for (let y = 0; y < height; y++) {
      if (rows[y * width + x]) last = y;
      if (y - last <= radius) out[y * width + x] = 1;
    }
    last = Infinity;
    for (let y = height - 1; y >= 0; y--) {
      if (rows[y * width + x]) last = y;
      if (last - y <= radius) out[y * width + x] = 1;
    }
  }
  return out;
}

/**
 * Pixels of the set with at least one 4-neighbour outside it (the grid border counts as outside).
 * @param {Uint8Array} inSet @param {number} width @param {number} height
 * @returns {Uint8Array}
 */
export function boundary(inSet, width, height) {
  const out = new Uint8Array(inSet.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (!inSet[i]) continue;
      if (
        x === 0 ||
        y === 0 ||
        x === width - 1 ||
        y === height - 1 ||
        !inSet[i - 1] ||
        !inSet[i + 1] ||
        !inSet[i - width] ||
        !inSet[i + width]
      )
        out[i] = 1;
    }
  }
  return out;
}

/**
 * A box on a grid, scaled to another size (for example from the check's grid to cut-out pixels).
 * @param {Box} box @param {number} sx @param {number} sy
 * @returns {Box}
 */
export function scaleBox(box, sx, sy) {
  return {
    x: Math.round(box.x * sx),
    y: Math.round(box.y * sy),
    width: Math.max(1, Math.round(box.width * sx)),
    height: Math.max(1, Math.round(box.height * sy)),
  };
}
