// How the calibration tools and the benches print their figures, one way each.

/** `a` of `b` as a whole percentage ("43%"), or "-" when there is nothing to count. */
export const percent = (a: number, b: number): string => (b ? `${((100 * a) / b).toFixed(0)}%` : '-');

/** `a` of `b` as a percentage with its counts ("43% (3/7)"). */
export const share = (a: number, b: number): string => `${b ? ((100 * a) / b).toFixed(0) : '-'}% (${a}/${b})`;

/** The p-th percentile of `xs` by nearest rank (p in 0..100; p 50 of [1, 2, 3, 4] is 2). */
export const percentile = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.max(0, Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1))]!;
