import { defineConfig } from 'vitest/config';
import { launcherNodeFlags } from './test/helpers/server.ts';

// In-process tests (the download's memory bound among them) run with the V8 heap flags of npm start.
const heapFlags = launcherNodeFlags();

// One project per tier, each its own command (npm run test:unit, test:db, test:http, test:e2e);
// npm test runs all four. What each needs and takes: README.md, "Tests".
const tier = (name: string) => ({ extends: true as const, test: { name, include: [`test/${name}/**/*.test.ts`] } });

export default defineConfig({
  test: {
    projects: [
      tier('unit'), // no model, no database server, no ../shared: under a minute
      tier('db'), // SQLite, PostgreSQL where it answers, s3rver
      tier('http'), // the app in process (app.inject) with a stand-in model
      tier('e2e'), // the real model, real processes, ../shared photos, Chromium
    ],
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
