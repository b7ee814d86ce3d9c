// CPU time per photo outside the model, and POST /v1/images latency against bare inference, for a
// 2000x2000 JPEG over real HTTP with the real model (npm run bench -- all runs this as its latency section;
// `node --import tsx bench/cpu.ts` runs it alone).
//
// CPU: every thread of the server (/proc/<pid>/task/*/schedstat, nanoseconds on the CPU) over one
// request, less the model's threads. Those are found on a warm-up request as the threads that were on
// the CPU for at least half of its wall time: the inference thread and onnxruntime's pool run for the
// whole model call (~90% of a request), every other thread for a small share of it. Subtracting a bare
// run's CPU instead does not work on this shared machine: the model's own CPU moves by hundreds of ms
// from one run to the next, more than everything else together.
// Latency: bare inference and the service alternate, one of each per pair (order swapped every pair).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { evalEntries, evalFile } from '../tools/shared-data.ts';
import { type RunningServer } from '../test/helpers/server.ts';
import { BareModel } from './bare-model.ts';

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Nanoseconds on the CPU of each thread of a process, by thread id. */
function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(Number(task), Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      /* the thread ended between the listing and the read */
    }
  }
  return out;
}

/** Per-thread CPU (ms) between two snapshots; threads born in between count from zero. */
function delta(before: Map<number, number>, after: Map<number, number>): Map<number, number> {
  const out = new Map<number, number>();
  for (const [tid, ns] of after) out.set(tid, (ns - (before.get(tid) ?? 0)) / 1e6);
  return out;
}

export interface CpuFigures {
  pairs: number;
  bareMs: number;
  imageMs: number;
  ratio: number;
  pairRatios: number[];
  /** Server CPU per request outside the model's threads, ms (median). */
  outsideModelCpuMs: number;
  /** The model's threads' CPU per request, ms (median). */
  modelCpuMs: number;
  modelThreads: number;
  /** Where a request's wall time went, ms (medians). */
  parts: Record<string, number>;
}

export async function measureCpuAndLatency(server: RunningServer, apiKey: string, pairs: number): Promise<CpuFigures> {
  const entry = evalEntries().filter((e) => e.kind === 'product')[0];
  const big = await sharp(evalFile(entry.image)).resize(2000, 2000, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
  // The bare model (bench/bare-model.ts): onnxruntime's own defaults in a process of its own, never the
  // server's settings.
  const bigFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'matte-bench-')), 'big.jpg');
  fs.writeFileSync(bigFile, big);
  const bareModel = await BareModel.start([bigFile]);
  const auth = { authorization: `Bearer ${apiKey}` };
  const pid = server.proc.pid!;

  const post = async () => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(big)]), 'big.jpg');
    const wall0 = Date.now();
    const cpu0 = threadCpu(pid);
    const t0 = performance.now();
    const res = await fetch(`${server.base}/v1/images`, { method: 'POST', body: form, headers: auth });
    await res.arrayBuffer();
    const ms = performance.now() - t0;
    const cpu = delta(cpu0, threadCpu(pid));
    if (res.status !== 200) throw new Error(`POST /v1/images answered ${res.status}`);
    const wall1 = Date.now();
    const item = (
      await (await fetch(`${server.base}/v1/jobs/${res.headers.get('x-matte-job-id')}`, { headers: auth })).json()
    ).items[0];
    return { ms, cpu, item, wall0, wall1 };
  };

  // Warm-up, twice (the first loads code paths and thread pools); the model's threads are read off the second:
  // those on the CPU for at least 40% of the model's run. The int8 model's second thread runs about 60-70% of
  // it, every thread outside the model under 30% (half the request's wall time, the rule for the float model,
  // missed the int8 model's second thread and counted it outside).
  await post();
  const warm = await post();
  const inference = warm.item.meta.timings.inference;
  const modelThreads = new Set([...warm.cpu].filter(([, ms]) => ms >= inference * 0.4).map(([tid]) => tid));
  if (modelThreads.size === 0)
    throw new Error("no thread of the server ran for 40% of the model's run: the model threads were not found");

  const bare: number[] = [];
  const image: number[] = [];
  const outside: number[] = [];
  const model: number[] = [];
  const parts: Record<string, number[]> = { 'before the claim': [], model: [], check: [], 'cut-out': [], after: [] };
  const bareOnce = async () => {
    bare.push(...(await bareModel.run([0])));
  };
  const imageOnce = async () => {
    const r = await post();
    image.push(r.ms);
    let inModel = 0;
    let total = 0;
    for (const [tid, ms] of r.cpu) {
      total += ms;
      if (modelThreads.has(tid)) inModel += ms;
    }
    outside.push(total - inModel);
    model.push(inModel);
    const tm = r.item.meta.timings;
    parts['before the claim'].push(r.item.startedAt - r.wall0);
    parts.model.push(tm.inference);
    parts.check.push(tm.diagnose);
    parts['cut-out'].push(tm.compose + tm.encode);
    parts.after.push(r.wall1 - r.item.finishedAt);
  };
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      await bareOnce();
      await imageOnce();
    } else {
      await imageOnce();
      await bareOnce();
    }
  }
  await bareModel.close();
  fs.rmSync(path.dirname(bigFile), { recursive: true, force: true });
  return {
    pairs,
    bareMs: median(bare),
    imageMs: median(image),
    ratio: median(image) / median(bare),
    pairRatios: image.map((t, i) => t / bare[i]),
    outsideModelCpuMs: median(outside),
    modelCpuMs: median(model),
    modelThreads: modelThreads.size,
    parts: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, median(v)])),
  };
}

export function cpuLines(f: CpuFigures): string[] {
  return [
    `2000x2000 JPEG: POST /v1/images p50 ${f.imageMs.toFixed(0)} ms; bare inference p50 ${f.bareMs.toFixed(0)} ms; ratio ${f.ratio.toFixed(3)} (${f.pairs} alternating pairs, their own ratios ${Math.min(...f.pairRatios).toFixed(2)}-${Math.max(...f.pairRatios).toFixed(2)})`,
    `  CPU per photo outside the model: ${f.outsideModelCpuMs.toFixed(0)} ms (median; the model's ${f.modelThreads} threads: ${f.modelCpuMs.toFixed(0)} ms)`,
    `  where a POST /v1/images went, p50 (ms): ${Object.entries(f.parts)
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(', ')}`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { startServer } = await import('../test/helpers/server.ts');
  const server = await startServer({ LOG_LEVEL: 'error', MATTE_REQUESTS_PER_MINUTE: '1000000' });
  try {
    const { apiKey } = await server.createAccount('bench-cpu@example.com', 1000, 0);
    const figures = await measureCpuAndLatency(server, apiKey, Number(process.env.BENCH_LATENCY_RUNS ?? 15));
    console.log(cpuLines(figures).join('\n'));
    fs.writeFileSync(process.env.BENCH_JSON ?? 'bench/results/cpu.json', JSON.stringify(figures, null, 2) + '\n');
  } finally {
    await server.stop();
  }
}
