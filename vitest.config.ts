import { defineConfig } from 'vitest/config';
import { launcherNodeFlags, MODEL_CACHE_DIR } from './test/helpers/server.ts';

// In-process tests (the download's memory bound among them) run with the V8 heap flags of npm start.
const heapFlags = launcherNodeFlags();

// One project per tier, each its own command (npm run test:unit, test:db, test:http, test:e2e);
// npm test runs all four. What each needs and takes: README.md, "Tests".
const tier = (name: string) => ({ extends: true as const, test: { name, include: [`test/${name}/**/*.test.ts`] } });

export default defineConfig({
  test: {
    projects: [
      // no model, no database server, no ../shared: its files share two worker threads (a fresh process a
      // file cost a third of the tier's CPU in loading modules again); a file restores what it changes, as
      // prepared-inputs.test.ts its fake timers
      { ...tier('unit'), test: { ...tier('unit').test, pool: 'threads' as const } },
      tier('db'), // SQLite, PostgreSQL where it answers, s3rver
      // the app in process (app.inject) with a stand-in model: its files share the two worker threads as the unit
      // tier's do, but for the download's memory bound, which reads its own process's RSS (http-memory)
      {
        ...tier('http'),
        test: { ...tier('http').test, pool: 'threads' as const, exclude: ['test/http/download-memory.test.ts'] },
      },
      { extends: true as const, test: { name: 'http-memory', include: ['test/http/download-memory.test.ts'] } },
      // the real model, real processes, ../shared photos, Chromium; the servers' model made once first
      // (the model loaded in a test's own process reads that cache too)
      {
        ...tier('e2e'),
        test: {
          ...tier('e2e').test,
          globalSetup: ['test/e2e/global-setup.ts'],
          // One model thread a server (the default is two): three files run at once on two cores, where a second
          // thread a run only contends (a model run costs 15-20% more CPU on two threads than on one). The real-model
          // test runs the default two.
          env: { MATTE_MODEL_CACHE_DIR: MODEL_CACHE_DIR || 'off', MATTE_MODEL_THREADS: '1' },
        },
      },
    ],
    // Three files at a time on 2 cores: the e2e files spend much of their time waiting on processes they
    // started, sockets and retry delays, so a third file fills those gaps (the whole suite: 9.2 min against
    // about 11 with two, one run each; memory holds: a real server with the model is under 3 GiB).
    pool: 'forks',
    // The unit and HTTP tiers' files share two threads beside the three forks: five files at once on two cores
    // only contend (the whole suite's CPU on an AVX-512 EPYC: 655-660 s with three threads, 596-629 with two; its time
    // 327-349 s with two in the tree, 356-367 on fresh clones, where it was 360 with three: its noise is ~20 s. On a
    // Sapphire Rapids, fresh clones: 206-229 s).
    poolOptions: { forks: { execArgv: heapFlags }, threads: { isolate: false, maxThreads: 2, minThreads: 2 } },
    maxWorkers: 3,
    // As many as the most: a pool that shrinks ended a shared worker while it still had a file's teardown to
    // run (seen with forks that run several files: "Terminating worker thread", and the process left running).
    minWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
