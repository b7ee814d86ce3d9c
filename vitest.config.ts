import { defineConfig } from 'vitest/config';
import { launcherNodeFlags } from './test/helpers/server.ts';

// In-process tests (the download's memory bound among them) run with the V8 heap flags of npm start.
const heapFlags = launcherNodeFlags();

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The e2e tier starts real servers that load an 88 MB model; keep parallel files at the core count.
    pool: 'forks',
    poolOptions: { forks: { execArgv: heapFlags } },
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
