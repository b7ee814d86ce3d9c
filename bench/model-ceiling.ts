// npm run bench -- model-ceiling: how fast two cores run the model at all, with none of the service's work around
// it, set against imgly-node, in interleaved rounds. The speed issue's goal imgly-node / Matte >= 8x needs Matte's batches at
// 8 / (imgly-node / bare) times the bare model; this bench says how far the model itself goes, with no work of
// the service's around it:
//   imgly-node    @imgly/background-removal-node's removeBackground, one photo after another (as speed-check)
//   bare          the speed-check's bare int8 model: sharp makes each input, then session.run, one after another
//   alone         session.run alone on inputs made beforehand, one after another (onnxruntime's defaults, 2 threads)
//   alone, ours   the same with the service's session options (no spinning, no memory pattern)
//   1+1 at once   two sessions of one thread each in two worker threads, each running half the photos at once
//   2+2 at once   the same with two threads each (four on two cores; no spinning, as the service's options)
// A photo alone on a session of one thread takes twice as long: 1+1 would fail the single-photo goal, 2+2 keeps it.
// Each arm runs the eight eval products of the speed-check (BENCH_CEILING_PHOTOS) once a round, BENCH_ROUNDS (5)
// rounds; ratios are taken within a round and the medians are the figures. Written to
// bench/results/model-ceiling.json and .md.
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { modelSource } from '../src/adapters/mask-model.adapter.ts';
import { readModel, runnableModel, sessionOptions } from '../src/adapters/model-session.mjs';
import { evalEntries, evalFile, HAVE_EVAL_DATA } from '../tools/shared-data.ts';
import { speedCheckInput } from './bare-model.ts';
import { median } from './cpu.ts';

if (!HAVE_EVAL_DATA) throw new Error('npm run bench -- model-ceiling reads ../shared/eval-data');
const PHOTOS = Number(process.env.BENCH_CEILING_PHOTOS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SIDE = 1024;

const photos = evalEntries()
  .filter((e) => e.kind === 'product')
  .slice(0, PHOTOS)
  .map((e) => evalFile(e.image));

const tensor = (x: Float32Array) => new ort.Tensor('float32', x, [1, 3, SIDE, SIDE]);

const model = runnableModel(readModel(modelSource()), { int8: true });
const inputs = await Promise.all(photos.map(speedCheckInput));
const defaults = await ort.InferenceSession.create(model, { intraOpNumThreads: 2 });
const ours = await ort.InferenceSession.create(model, sessionOptions(2));
/** Two sessions in two worker threads, of `threads` threads each. */
const pairOf = (threads: number) =>
  Promise.all(
    [0, 1].map(async () => {
      const worker = new Worker(new URL('./model-ceiling.worker.mjs', import.meta.url), {
        workerData: { model, inputs, threads },
      });
      await new Promise((resolve) => worker.once('message', resolve));
      return worker;
    }),
  );
const pairs = [await pairOf(1), await pairOf(2)];
const { removeBackground } = createRequire(import.meta.url)('@imgly/background-removal-node') as {
  removeBackground: (blob: Blob, opts: object) => Promise<Blob>;
};
const imgly = async (photo: Buffer) =>
  (
    await removeBackground(new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), {
      model: 'medium',
      output: { format: 'image/png' },
    })
  ).arrayBuffer();

/** Milliseconds a photo of `work` over all the photos. */
async function msPerPhoto(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return (performance.now() - t0) / photos.length;
}
/** Both sessions of a pair at once, each on half the photos. */
const atOnce = (pair: Worker[]) =>
  msPerPhoto(() =>
    Promise.all(
      pair.map(
        (worker, i) =>
          new Promise((resolve) => {
            worker.once('message', resolve);
            worker.postMessage(Math.floor(photos.length / 2) + (i < photos.length % 2 ? 1 : 0));
          }),
      ),
    ),
  );
const oneAfterAnother = async (session: ort.InferenceSession) => {
  for (const x of inputs) await session.run({ input: tensor(x) }, ['output']);
};

// Every arm once, untimed.
await imgly(photos[0]!);
for (const session of [defaults, ours]) await session.run({ input: tensor(inputs[0]!) }, ['output']);

interface Round {
  imgly: number;
  bare: number;
  alone: number;
  aloneOurs: number;
  oneAndOne: number;
  twoAndTwo: number;
}
const rounded = (round: Round) => Object.fromEntries(Object.entries(round).map(([k, v]) => [k, Math.round(v)]));
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const round: Round = {
    imgly: await msPerPhoto(async () => {
      for (const p of photos) await imgly(p);
    }),
    bare: await msPerPhoto(async () => {
      for (const p of photos) await defaults.run({ input: tensor(await speedCheckInput(p)) }, ['output']);
    }),
    alone: await msPerPhoto(() => oneAfterAnother(defaults)),
    aloneOurs: await msPerPhoto(() => oneAfterAnother(ours)),
    oneAndOne: await atOnce(pairs[0]!),
    twoAndTwo: await atOnce(pairs[1]!),
  };
  rounds.push(round);
  console.log(`round ${r + 1}: ${JSON.stringify(rounded(round))}`);
}
await Promise.all(pairs.flat().map((w) => w.terminate()));

const arms = ['bare', 'alone', 'aloneOurs', 'oneAndOne', 'twoAndTwo'] as const;
const words: Record<(typeof arms)[number], string> = {
  bare: "the speed-check's bare int8 model (inputs made in turn)",
  alone: 'the model alone, inputs made beforehand (onnxruntime defaults)',
  aloneOurs: "the model alone, the service's session options",
  oneAndOne: 'two sessions of one thread each, at once',
  twoAndTwo: "two sessions of two threads each, at once (the service's options)",
};
const fixed = (x: number, d = 2) => Number(x.toFixed(d));
const figures = {
  machine: `${os.cpus()[0]?.model ?? '?'}, ${os.availableParallelism()} CPUs`,
  photos: photos.length,
  rounds: rounds.map(rounded),
  imglyMsPerPhoto: Math.round(median(rounds.map((r) => r.imgly))),
  arms: Object.fromEntries(
    arms.map((a) => [
      a,
      {
        msPerPhoto: Math.round(median(rounds.map((r) => r[a]))),
        imglyOver: fixed(median(rounds.map((r) => r.imgly / r[a]))),
        overBare: fixed(median(rounds.map((r) => r.bare / r[a])), 3),
      },
    ]),
  ),
};
const lines = [
  `# How fast two cores run the model, against imgly-node (${new Date().toISOString().slice(0, 10)})`,
  '',
  `${figures.machine}; ${photos.length} eval products, ${ROUNDS} interleaved rounds, medians of the rounds' ratios.`,
  `imgly-node: ${figures.imglyMsPerPhoto} ms a photo.`,
  '',
  '| arm | ms a photo | imgly-node / arm | arm against bare |',
  '| --- | ---: | ---: | ---: |',
  ...arms.map(
    (a) =>
      `| ${words[a]} | ${figures.arms[a].msPerPhoto} | ${figures.arms[a].imglyOver}× | ${figures.arms[a].overBare} |`,
  ),
  '',
];
fs.writeFileSync('bench/results/model-ceiling.json', `${JSON.stringify(figures, null, 2)}\n`);
fs.writeFileSync('bench/results/model-ceiling.md', lines.join('\n'));
console.log(lines.join('\n'));
