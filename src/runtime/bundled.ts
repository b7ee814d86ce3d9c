// What the built command (scripts/build-cli.mjs → dist/cli) has beside its own code, for a worker thread to load:
// the build replaces this file's contents. Null where the sources run as they are (through tsx, in the tests).

/** The automatic check's module (pipeline/check/check-run.ts) built, for its thread (check.worker.mjs). */
export const checkRunUrl: string | null = null;
