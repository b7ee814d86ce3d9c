// The shared data the calibration tools, the benches and the tests read, in place (never copied into the
// repository): where ../shared is, and ../shared/eval-data's photos with drawn masks.
//
// Where ../shared (spec, eval-data) is: MATTE_SHARED_DIR if set, else beside this checkout, else beside the
// repository this one was cloned from (a fresh clone in a temp folder). Undefined when none exists:
// the suites that read it then skip and say so.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import sharp from 'sharp';

const ROOT = path.resolve(import.meta.dirname, '..');

function originDir(): string | undefined {
  try {
    const url = execFileSync('git', ['config', '--get', 'remote.origin.url'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return url && fs.existsSync(url) ? path.resolve(url) : undefined;
  } catch {
    return undefined;
  }
}

function find(): string | undefined {
  // Set, MATTE_SHARED_DIR is the only place looked at (a path that does not exist stands for "absent").
  const candidates = process.env.MATTE_SHARED_DIR
    ? [process.env.MATTE_SHARED_DIR]
    : [path.join(ROOT, '..', 'shared'), originDir() && path.join(originDir()!, '..', 'shared')];
  return candidates.find((d): d is string => !!d && fs.existsSync(path.join(d, 'eval-data', 'manifest.json')));
}

export const SHARED_DIR = find();
if (!SHARED_DIR) {
  console.warn(
    '[matte tests] ../shared (spec and eval-data) not found: suites that read it are SKIPPED. Set MATTE_SHARED_DIR to its path.',
  );
}

// ../shared/eval-data (photos with ground-truth masks).
export const EVAL_DIR = path.join(SHARED_DIR ?? '/nonexistent', 'eval-data');
export const HAVE_EVAL_DATA = SHARED_DIR !== undefined;

export interface EvalEntry {
  id: string;
  /** The folder it came from: alphamatting, grabcut or cleargrasp. */
  source: string;
  image: string;
  mask: string;
  kind: string;
  mask_type: 'alpha' | 'binary';
  width: number;
  height: number;
}

export function evalEntries(): EvalEntry[] {
  if (!HAVE_EVAL_DATA) return [];
  return JSON.parse(fs.readFileSync(path.join(EVAL_DIR, 'manifest.json'), 'utf8')) as EvalEntry[];
}

export function evalFile(rel: string): Buffer {
  return fs.readFileSync(path.join(EVAL_DIR, rel));
}

/** IoU of alpha >= 128 against truth >= 128, and the mean absolute alpha error (0..1); both buffers one channel, same size. */
export function compareAlpha(alpha: Uint8Array, truth: Uint8Array): { iou: number; mae: number } {
  let inter = 0;
  let union = 0;
  let err = 0;
  for (let i = 0; i < truth.length; i++) {
    const a = alpha[i] >= 128;
    const b = truth[i] >= 128;
    if (a && b) inter++;
    if (a || b) union++;
    err += Math.abs(alpha[i] - truth[i]) / 255;
  }
  return { iou: union ? inter / union : 1, mae: err / truth.length };
}

/** IoU of a cutout's alpha >= 128 against ground truth >= 128, at the ground truth's size. */
export async function iou(cutoutPng: Buffer, entry: EvalEntry): Promise<number> {
  const gt = await sharp(evalFile(entry.mask)).extractChannel(0).raw().toBuffer();
  const alpha = await sharp(cutoutPng)
    .ensureAlpha()
    .extractChannel(3)
    .resize(entry.width, entry.height, { fit: 'fill' })
    .raw()
    .toBuffer();
  return compareAlpha(alpha, gt).iou;
}
