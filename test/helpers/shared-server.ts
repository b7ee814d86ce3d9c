// The server on the defaults that the e2e files share, started once by test/e2e/global-setup.ts.
import { inject } from 'vitest';
import { commands, type ServerHandle } from './server.ts';

/** What the global setup tells the e2e files of the server they share. */
export interface SharedServerInfo {
  base: string;
  dataDir: string;
  /** The variables it was started with beyond the test process's own: bin/matte beside it needs them. */
  env: Record<string, string>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    sharedServer: SharedServerInfo;
  }
}

/**
 * The e2e tier's default server: a file that needs nothing but a server on the defaults takes this one instead
 * of starting its own (a start is about 5 CPU-s of loading code and the model, and its first photos' compiling,
 * on a 2-core machine that runs three files at once). Each file makes its own accounts on it, so what one does
 * is not seen by another; stop() leaves it running for the others.
 */
export function sharedServer(): ServerHandle {
  const info = inject('sharedServer');
  return { ...commands(info.base, info.dataDir, { ...process.env, ...info.env }), stop: async () => {} };
}
