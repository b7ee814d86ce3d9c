// Real photos with masks a person drew, judged as the service judges them: `../shared/eval-data` as it is and
// `../shared/real-photos` (the Weizmann horses). The check is chosen on these (docs/check.md): composites help
// fit it, real photos decide. Each photo's light mask is the real model's, cached by the photo's bytes under
// .bench/photos/ (PHOTOS_CACHE), the same file `npm run bench -- photos` reads, so a second run needs no model.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { ImageDecoder, type DecodedImage } from '../../src/adapters/images/decoder.ts';
import { CheckRasters } from '../../src/adapters/images/rasters.ts';
import { OnnxMaskModel, MODEL_INPUT_SIZE, squareInput } from '../../src/adapters/mask-model.adapter.ts';
import { int8Identity } from '../../src/adapters/model-session.mjs';
import { loadConfig, modelCacheDir } from '../../src/config.ts';
import { maskStatistics } from '../../src/imaging/model-io.mjs';
import { PhotoError } from '../../src/errors.ts';
import { diagnose, type Diagnosis } from '../../src/pipeline/diagnose.ts';
import { FEATURES } from '../../src/pipeline/check/calibration.ts';
import { CHECK_GRID, measure } from '../../src/pipeline/check/features.ts';
import { NO_SUBJECT_FILL, subjectFillOf, WHOLE_FRAME_FILL } from '../../src/pipeline/diagnose.ts';
import { compareAlpha, SHARED_DIR } from '../shared-data.ts';
import { TRUTH_BARS } from '../../src/pipeline/check/calibration.ts';

export const PHOTOS_CACHE = process.env.PHOTOS_CACHE ?? path.join(import.meta.dirname, '..', '..', '.bench', 'photos');

/** Where a pass's 1024² mask of a photo is cached, by the photo's bytes (bench:photos, calibrate). */
export function maskFile(cache: string, bytes: Buffer, pass = 'light'): string {
  const photo = crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 24);
  return path.join(cache, `${photo}.${pass}.mask`);
}

/**
 * A model's masks of photos, cached under `cache` by the photo's bytes and the pass's name: the model (the
 * shipped one, or `modelPath`; with `int8`, the shipped weights quantized as MATTE_MODEL_INT8 runs them) is
 * loaded only when a photo is not cached yet.
 */
export class CachedMasks {
  private model: OnnxMaskModel | undefined;
  constructor(
    private readonly cache = PHOTOS_CACHE,
    /** The pass's name in the cached files' names: `light` (the float model), `int8-…`, `heavy-…`. */
    readonly pass = 'light',
    private readonly modelPath = '',
    private readonly int8 = false,
  ) {
    fs.mkdirSync(cache, { recursive: true });
  }

  async mask(bytes: Buffer, input: Buffer): Promise<Buffer> {
    const file = maskFile(this.cache, bytes, this.pass);
    if (fs.existsSync(file)) return fs.readFileSync(file);
    const mask = await this.run(input);
    fs.writeFileSync(file, mask);
    return mask;
  }

  /** The model's mask of a 1024² input, not cached (the calibration set keeps its own). */
  async run(input: Buffer): Promise<Buffer> {
    // The server's optimised-model cache (MATTE_MODEL_CACHE_DIR): the model is optimised (and quantized) once.
    const cacheDir = modelCacheDir(process.env) || undefined;
    this.model ??= new OnnxMaskModel({ modelPath: this.modelPath, threads: 2, int8: this.int8, cacheDir });
    await this.model.ready();
    return Buffer.from((await this.model.predict(squareInput(input))).mask);
  }

  async close(): Promise<void> {
    await this.model?.close();
  }
}

/**
 * The int8 model's masks (the service's default light model), cached apart from the float model's and keyed by
 * the int8 model's identity (its calibration and quantizer), so a new calibration makes new masks.
 */
export function int8Masks(cache = PHOTOS_CACHE): CachedMasks {
  return new CachedMasks(cache, int8Pass(), '', true);
}

/** The int8 masks' pass name: `int8-` and the int8 model's identity. */
function int8Pass(): string {
  return `int8-${crypto.createHash('sha256').update(`${int8Identity()}`).digest('hex').slice(0, 12)}`;
}

/** The pass name of the service's light masks as MATTE_MODEL_INT8 sets them (serviceMasks). */
export function servicePass(): string {
  return loadConfig(process.env).modelInt8 ? int8Pass() : 'light';
}

/**
 * The light masks the service makes as MATTE_MODEL_INT8 sets them: the int8 model's (the default), or the float
 * model's. The check is fitted and judged on these.
 */
export function serviceMasks(cache = PHOTOS_CACHE): CachedMasks {
  const pass = servicePass();
  return new CachedMasks(cache, pass, '', pass !== 'light');
}

/** A photo with the mask a person drew, read as the service reads it (bench:photos and calibrate share it). */
export interface MaskedPhoto {
  bytes: Buffer;
  decoded: DecodedImage;
  /** The model's 1024² input, and the light model's mask of it (cached). */
  input: Buffer;
  light: Buffer;
  /** The drawn mask at the photo's size, one channel. */
  truth: Buffer;
  /** A 1024² mask scaled to the photo as the service scales it, against the truth: IoU at 128 and mean error. */
  score(mask: Buffer): Promise<{ iou: number; mae: number }>;
  /** The drawn mask at the model's 1024² (what the report judge reads). */
  truthAtModelSize(): Promise<Buffer>;
}

/** Reads photos with drawn masks: one decoder, one set of check rasters and one mask cache for them all. */
export class MaskedPhotoReader {
  readonly decoder = new ImageDecoder(100_000_000);
  readonly rasters = new CheckRasters(100_000_000);
  constructor(readonly masks = new CachedMasks()) {}

  async read(photoFile: string, maskFile: string): Promise<MaskedPhoto> {
    const bytes = fs.readFileSync(photoFile);
    const decoded = await this.decoder.decode(bytes);
    const input = (await this.decoder.toModelInput(decoded, MODEL_INPUT_SIZE)).rgb;
    const light = await this.masks.mask(bytes, input);
    const { width, height } = decoded;
    const truth = await sharp(fs.readFileSync(maskFile))
      .resize(width, height, { fit: 'fill' })
      .extractChannel(0)
      .raw()
      .toBuffer();
    return {
      bytes,
      decoded,
      input,
      light,
      truth,
      score: async (mask) => compareAlpha(await this.rasters.maskToSize(mask, MODEL_INPUT_SIZE, decoded), truth),
      truthAtModelSize: () =>
        sharp(truth, { raw: { width, height, channels: 1 } })
          .resize(MODEL_INPUT_SIZE, MODEL_INPUT_SIZE, { fit: 'fill' })
          .extractChannel(0)
          .raw()
          .toBuffer(),
    };
  }

  /**
   * The photo saved again as JPEG (resavedJpeg), read as the service reads it: decoded, made into the model's
   * input again, and its own mask (cached by the re-save's bytes).
   */
  async resaved(photo: MaskedPhoto): Promise<{ decoded: DecodedImage; input: Buffer; mask: Buffer }> {
    const again = await resavedJpeg(photo.bytes);
    const decoded = await this.decoder.decode(again);
    const input = (await this.decoder.toModelInput(decoded, MODEL_INPUT_SIZE)).rgb;
    return { decoded, input, mask: await this.masks.mask(again, input) };
  }

  close(): Promise<void> {
    return this.masks.close();
  }
}

/** A result the drawn mask calls broken (IoU below) or good (IoU from): the check's errors are counted on them. */
export const { brokenBelow: BROKEN_BELOW, goodFrom: GOOD_FROM } = TRUTH_BARS;

/**
 * The shipped check's diagnosis of a square mask and the model's input it was made from, as the service judges
 * it; null when the photo has no subject (it fails, uncharged).
 */
export async function checkDiagnosis(
  rasters: CheckRasters,
  photo: MaskedPhoto,
  mask: Buffer,
  input: { rgb: Buffer; width: number; height: number },
): Promise<Diagnosis | null> {
  try {
    const grid = {
      mask: rasters.checkMask(mask, MODEL_INPUT_SIZE, CHECK_GRID),
      rgb: await rasters.checkColours(input, CHECK_GRID),
    };
    return diagnose(maskStatistics(mask, MODEL_INPUT_SIZE), grid, MODEL_INPUT_SIZE, photo.decoded);
  } catch (err) {
    if (!(err instanceof PhotoError)) throw err;
    return null;
  }
}

/**
 * The shipped check's verdict (checkDiagnosis): red when flagged, and the broken probability; a photo with no
 * subject fails, and counts as flagged (probability 1).
 */
export async function checkVerdict(
  ...args: Parameters<typeof checkDiagnosis>
): Promise<{ red: boolean; brokenProbability: number }> {
  const d = await checkDiagnosis(...args);
  return { red: d?.red ?? true, brokenProbability: d?.brokenProbability ?? 1 };
}

/** The shipped check's verdict alone (checkVerdict): red when flagged. */
export async function checkFlags(...args: Parameters<typeof checkDiagnosis>): Promise<boolean> {
  return (await checkVerdict(...args)).red;
}

/** The JPEG quality of the re-save the check's verdicts are held against (issue 57). */
export const RESAVE_QUALITY = 95;

/** A photo decoded and saved again as JPEG at RESAVE_QUALITY, upright as the service decodes it. */
export function resavedJpeg(bytes: Buffer): Promise<Buffer> {
  return sharp(bytes).rotate().jpeg({ quality: RESAVE_QUALITY }).toBuffer();
}

/** The check's errors against the drawn masks: good results flagged, broken ones passed. */
export function checkErrors(rows: { iou: number; red: boolean }[]) {
  const good = rows.filter((r) => r.iou >= GOOD_FROM);
  const broken = rows.filter((r) => r.iou < BROKEN_BELOW);
  return {
    goodFlagged: good.filter((r) => r.red).length,
    good: good.length,
    brokenPassed: broken.filter((r) => !r.red).length,
    broken: broken.length,
  };
}

/** The kinds of scene the check's figures are reported by (issue 43). */
export const SCENES = ['studio backdrop', 'busy indoor', 'busy outdoor'] as const;
export const SUBJECTS = ['products and objects', 'people', 'animals', 'transparent'] as const;
export type Scene = (typeof SCENES)[number];
export type Subject = (typeof SUBJECTS)[number];

/**
 * The scene of each eval photo, read off the photos by a person (2026-11-29): GrabCut's objects on a plain cloth
 * are a studio backdrop, on a printed cloth busy indoor; alphamatting's toys sit before a screen showing an
 * outdoor view (busy outdoor) except the striped and cluttered rooms; ClearGrasp's bottles lie on a white
 * table. The Weizmann horses stand outdoors (fields, fences, sand).
 */
const STUDIO = ['banana1', 'book', 'ceramic', 'elefant', 'teddy', 'stone1', '000000153'];
const INDOOR = ['banana2', 'banana3', 'music', 'scissors', 'stone2', 'gt02', 'gt18', 'gt24', 'gt25', 'gt26', 'gt27'];

export function sceneOf(id: string): Scene {
  const name = id.replace(/^[a-z]+-/, '');
  if (id.startsWith('wzhorse-')) return 'busy outdoor';
  if (STUDIO.includes(name)) return 'studio backdrop';
  return INDOOR.includes(name) ? 'busy indoor' : 'busy outdoor';
}

/** The manifest's kind as a subject: person, animal and transparent, and everything else. */
export function subjectOf(kind: string): Subject {
  return kind === 'person'
    ? 'people'
    : kind === 'animal'
      ? 'animals'
      : kind === 'transparent'
        ? 'transparent'
        : 'products and objects';
}

export interface RealSample {
  id: string;
  /** The folder it comes from: eval-data, real-photos, or an operator's own (CALIBRATION_PHOTOS). */
  folder: string;
  /** Its kind of scene and subject; an operator's own photos are `unlabelled`. */
  scene: Scene | 'unlabelled';
  subject: Subject | 'unlabelled';
  iou: number;
  /** Decided by the pipeline's own rules (no subject, or the whole frame kept): flagged, never fitted on. */
  ruled: boolean;
  /** Every feature a calibration may read (FEATURES), from the check's own measures. */
  f: Record<string, number>;
  /**
   * The same photo saved again as JPEG at RESAVE_QUALITY (what a seller's tools do to it): its features, and
   * whether the pipeline's rules decide it (a check's verdicts should not turn on this; issue 57).
   */
  resaved: { f: Record<string, number>; ruled: boolean };
}

interface ManifestEntry {
  id: string;
  image: string;
  mask: string;
  kind?: string;
}

const PHOTO = /\.(jpe?g|png|webp)$/i;
const MASK = /\.(mask|gt)\.(png|gif)$/i;

/**
 * Every photo with a mask beside it (`name.jpg` and `name.mask.png` or `name.gt.png`) in a folder and its
 * subfolders one level down: an operator's own photos, with paths relative to the folder.
 */
export function maskedPhotos(folder: string): ManifestEntry[] {
  const out: ManifestEntry[] = [];
  const scan = (dir: string, prefix: string) => {
    const names = fs.readdirSync(dir).sort();
    for (const name of names) {
      const file = path.join(dir, name);
      if (fs.statSync(file).isDirectory()) {
        if (!prefix) scan(file, `${name}/`);
        continue;
      }
      if (!PHOTO.test(name) || MASK.test(name)) continue;
      const stem = name.replace(PHOTO, '');
      const mask = names.find((m) => MASK.test(m) && m.replace(MASK, '') === stem);
      if (mask) out.push({ id: `${prefix}${stem}`, image: `${prefix}${name}`, mask: `${prefix}${mask}` });
    }
  };
  scan(folder, '');
  return out;
}

/**
 * The folders of real photos the check is chosen on: ../shared/eval-data and ../shared/real-photos (each with
 * its manifest), and an operator's own folder of photos with masks when CALIBRATION_PHOTOS names one.
 */
export function realFolders(
  extra = process.env.CALIBRATION_PHOTOS,
): { name: string; dir: string; entries: ManifestEntry[] }[] {
  if (!SHARED_DIR) throw new Error('real photos need ../shared (MATTE_SHARED_DIR)');
  const shared = ['eval-data', 'real-photos'].map((name) => {
    const dir = path.join(SHARED_DIR!, name);
    return {
      name,
      dir,
      entries: JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as ManifestEntry[],
    };
  });
  return extra
    ? [...shared, { name: path.basename(path.resolve(extra)), dir: extra, entries: maskedPhotos(extra) }]
    : shared;
}

/** The check's features of a 1024² mask and the input it was made from, and whether the fill rules decide it. */
async function measured(
  reader: MaskedPhotoReader,
  mask: Buffer,
  input: Buffer,
): Promise<{ f: Record<string, number>; ruled: boolean }> {
  const fill = subjectFillOf(maskStatistics(mask, MODEL_INPUT_SIZE).histogram);
  const features = measure(await reader.rasters.checkGrid(mask, input, MODEL_INPUT_SIZE, CHECK_GRID)).features;
  const f: Record<string, number> = {};
  for (const [name, make] of Object.entries(FEATURES)) f[name] = make(features);
  return { f, ruled: fill < NO_SUBJECT_FILL || fill > WHOLE_FRAME_FILL };
}

/**
 * Every real photo of the shared folders, in manifest order, measured: the service's light mask (serviceMasks,
 * cached), its IoU against the drawn mask at the photo's size, and the check's features, of the photo and of
 * the photo saved again as JPEG (its mask cached too: the same file check-stability reads). `keep` also returns the 1024² planes
 * the report judge reads (input, light mask, truth).
 */
export async function realSamples(
  opts: { keep?: boolean; log?: (line: string) => void } = {},
): Promise<{ samples: RealSample[]; planes: Map<string, { input: Buffer; light: Buffer; truth: Buffer }> }> {
  const reader = new MaskedPhotoReader(serviceMasks());
  const samples: RealSample[] = [];
  const planes = new Map<string, { input: Buffer; light: Buffer; truth: Buffer }>();
  for (const { name: folder, dir, entries } of realFolders()) {
    const shared = folder === 'eval-data' || folder === 'real-photos';
    for (const e of entries) {
      const photo = await reader.read(path.join(dir, e.image), path.join(dir, e.mask));
      const { input, light } = photo;
      const { iou } = await photo.score(light);
      const { f, ruled } = await measured(reader, light, input);
      const again = await reader.resaved(photo);
      const resaved = await measured(reader, again.mask, again.input);
      samples.push({
        id: e.id,
        folder,
        scene: shared ? sceneOf(e.id) : 'unlabelled',
        subject: shared ? subjectOf(e.kind ?? '') : 'unlabelled',
        iou,
        ruled,
        f,
        resaved,
      });
      if (opts.keep) planes.set(e.id, { input, light, truth: await photo.truthAtModelSize() });
      opts.log?.(`${e.id.padEnd(24)} IoU ${iou.toFixed(3)}`);
    }
  }
  await reader.close();
  return { samples, planes };
}
