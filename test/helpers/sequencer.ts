// The order in which vitest starts the files: the slowest first, so that none of them starts last and runs alone
// while the other core idles. Vitest orders by the last run's times where it has them, but a fresh clone has none,
// and there it starts the largest files first: three small, slow ones (the download's memory test, int8-model,
// model-cache) then ran last, and the suite took 363 s against 327 with the last run's order (one run each, 2 cores).
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Seconds each file of 10 s or more took in one `npm test` on 2 cores (vitest's own timings of a run, rounded):
 * weights for the order, not limits. A file not listed counts as quick.
 */
const SECONDS: Record<string, number> = {
  'test/e2e/scale-out.test.ts': 95,
  'test/e2e/bench-photos.test.ts': 81,
  'test/e2e/model/model-cache.test.ts': 81,
  'test/e2e/events.test.ts': 75,
  'test/e2e/quality.test.ts': 71,
  'test/e2e/studio.test.ts': 66,
  'test/e2e/accounts.test.ts': 63,
  'test/e2e/model/model-float32.test.ts': 61,
  'test/e2e/worker-processes.test.ts': 58,
  'test/e2e/model/mask-model.test.ts': 55,
  'test/http/download-memory.test.ts': 54,
  'test/e2e/int8-model.test.ts': 46,
  'test/e2e/client-cli.test.ts': 34,
  'test/http/limits-validation.test.ts': 33,
  'test/http/events.test.ts': 26,
  'test/e2e/real-model.test.ts': 20,
  'test/http/studio-sessions.test.ts': 18,
  'test/e2e/output.test.ts': 14,
  'test/e2e/remote-inference.test.ts': 14,
  'test/e2e/first-hour.test.ts': 13,
  'test/e2e/first-start.test.ts': 13,
  'test/http/faults.test.ts': 13,
  'test/e2e/model/model-int8.test.ts': 12,
  'test/e2e/model/oip-model.test.ts': 12,
  'test/http/render.test.ts': 12,
  'test/http/large-bodies.test.ts': 12,
  'test/http/images-timeouts.test.ts': 12,
  'test/http/batch-flow.test.ts': 11,
};

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (f: TestSpecification) => SECONDS[path.relative(ROOT, f.moduleId)] ?? 0;
    // Array.prototype.sort is stable: among the quick ones, vitest's own order (its timings, or larger first).
    return (await super.sort(files)).sort((a, b) => seconds(b) - seconds(a));
  }
}
