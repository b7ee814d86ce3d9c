// The project's occasional jobs, a family to an npm script: `npm run bench -- <name> [args]`,
// `npm run calibrate -- <name>`, `npm run model -- <name>`; with no name, the family's list. `npm run
// generate` runs every generator in turn. Each job runs as its own process (node --import tsx FILE ARGS),
// with this terminal, and its exit code is this one's.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

interface Job {
  file: string;
  args?: string[];
  about: string;
}

const root = path.resolve(import.meta.dirname, '..');

const FAMILIES: Record<string, { about: string; jobs: Record<string, Job>; runAllWhenNone?: boolean }> = {
  bench: {
    about: 'benchmarks; each writes its figures under bench/results (docs/performance.md explains them)',
    jobs: {
      all: { file: 'bench/run.ts', about: 'every figure of the service in one run (bench/results/latest.md)' },
      aspect: { file: 'bench/aspect.ts', about: "the model at the photo's own aspect ratio, against the drawn masks" },
      'check-cost': { file: 'bench/check-cost.ts', about: "the automatic check's CPU a photo" },
      'check-stability': {
        file: 'bench/check-stability.ts',
        about: "the check's verdicts on real photos against the same photos saved again as JPEG",
      },
      cpu: { file: 'bench/cpu.ts', about: 'POST /v1/images against the bare model, and CPU outside the model' },
      'cutout-passes': { file: 'bench/cutout-passes.ts', about: "the cut-out's pixel passes, JavaScript against C" },
      edges: {
        file: 'bench/edges.ts',
        about: "the service's cut-outs against the drawn masks: IoU, edge error, see-through inside",
      },
      'eval-photos': { file: 'bench/eval-photos.ts', about: "the check's figures on ../shared/eval-data as it is" },
      events: { file: 'bench/events.ts', about: 'photo finished to SSE message and to webhook, p50 and p99' },
      float32: { file: 'bench/float32.ts', about: 'the float16 weights as shipped against their float32 copy' },
      'heavy-looks': {
        file: 'bench/heavy-looks.ts',
        about: 'a heavy tier of the shipped weights (looks combined) against light, on the drawn masks',
      },
      'image-stages': { file: 'bench/image-stages.ts', about: 'where one POST /v1/images spends its time' },
      int8: { file: 'bench/int8.ts', about: 'the int8 model against the float model, speed and quality' },
      'int8-gate': { file: 'bench/int8-gate.ts', about: 'the int8 default against float on every drawn-mask set' },
      'int8-ablation': { file: 'bench/int8-ablation.ts', about: "what each of int8's roundings costs (35 min)" },
      memory: { file: 'bench/memory.ts', about: "a worker's peak memory, setting by setting" },
      'model-ceiling': {
        file: 'bench/model-ceiling.ts',
        about: 'how fast two cores run the model at all, with nothing around it, against imgly-node',
      },
      photos: { file: 'bench/photos.ts', about: 'the check and the report judge on a folder of photos with masks' },
      scale: { file: 'bench/scale.ts', about: 'remote inference, the queue at 10,000 photos, statements a photo' },
      startup: { file: 'bench/startup.ts', about: 'starting bin/matte: its build against the sources through tsx' },
      'stage-cpu': { file: 'bench/stage-cpu.ts', about: "a 2000x2000 photo's CPU outside the model, stage by stage" },
      'touch-up': {
        file: 'bench/touch-up.ts',
        about: 'a simulated seller touches up real photos with drawn masks through the API; a 2000x2000 touch-up timed',
      },
    },
  },
  calibrate: {
    about: "the automatic check's calibration (docs/check.md)",
    jobs: {
      write: {
        file: 'tools/calibration/calibrate.ts',
        args: ['--write-calibration'],
        about: 'fit the check and write its calibration file',
      },
      figures: {
        file: 'tools/calibration/calibrate.ts',
        about: "the check's figures on held-out folds, nothing written",
      },
      set: { file: 'tools/calibration/calibration-set.ts', about: 'make the calibration set from ../shared/eval-data' },
      claims: { file: 'tools/calibration/claims-calibration.ts', about: "fit the report judge's bars" },
    },
  },
  model: {
    about: 'the model files Matte runs',
    jobs: {
      export: { file: 'scripts/export-model.ts', about: 'write the shipped ISNet weights as one ONNX file' },
      calibrate: { file: 'tools/model-calibrate.ts', about: "measure the int8 model's activation ranges" },
      quantize: { file: 'scripts/model-quantize.ts', about: 'write the int8 model from the weights and ranges' },
    },
  },
  generate: {
    about: 'the files made from the code (checked by tests to be current); with no name, all of them',
    runAllWhenNone: true,
    jobs: {
      'error-docs': { file: 'scripts/error-docs.ts', about: 'docs/errors.md from the error codes' },
      'config-docs': { file: 'scripts/config-docs.ts', about: 'docs/configuration.md from the settings' },
      'client-types': { file: 'scripts/client-types.ts', about: "@matte/client's types from the OpenAPI document" },
    },
  },
};

function run(job: Job, args: string[]): number {
  const file = path.join(root, job.file);
  const result = spawnSync(process.execPath, ['--import', 'tsx', file, ...(job.args ?? []), ...args], {
    stdio: 'inherit',
    cwd: process.cwd(),
  });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function list(family: string): string {
  const { about, jobs } = FAMILIES[family];
  const width = Math.max(...Object.keys(jobs).map((n) => n.length));
  return [
    `npm run ${family} -- <name> [args]: ${about}`,
    ...Object.entries(jobs).map(([name, job]) => `  ${name.padEnd(width)}  ${job.about}`),
  ].join('\n');
}

const [family, name, ...args] = process.argv.slice(2);
if (!family || !FAMILIES[family]) {
  console.error(`scripts/jobs.ts: a family is needed: ${Object.keys(FAMILIES).join(', ')}`);
  process.exit(2);
}
const { jobs, runAllWhenNone } = FAMILIES[family];
if (!name) {
  if (!runAllWhenNone) {
    console.log(list(family));
    process.exit(0);
  }
  for (const job of Object.values(jobs)) {
    const code = run(job, []);
    if (code !== 0) process.exit(code);
  }
  process.exit(0);
}
const job = jobs[name];
if (!job) {
  console.error(`npm run ${family}: no job named "${name}"\n${list(family)}`);
  process.exit(2);
}
process.exit(run(job, args));
