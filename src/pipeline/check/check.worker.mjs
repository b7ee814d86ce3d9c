// Worker thread of the automatic check (photo-check.ts CheckThread): the model's input reduced to the check's
// grid while the model runs, then the check of its mask (check-run.ts), off the API's event loop. The check's
// code is TypeScript, and a worker thread starts without its parent's loader: it loads check-run.ts as the
// command's build made it (`workerData.module`, beside dist/cli's code), or, where the sources run as they are
// (the tests), through tsx's loader, registered first (about 30 MiB and 450 ms of CPU more at the start).
import { parentPort, workerData } from 'node:worker_threads';

/** @type {typeof import('./check-run.ts')} */
const run = workerData?.module
  ? await import(workerData.module)
  : await import('tsx/esm/api').then(({ register }) => {
      register();
      return import('./check-run.ts');
    });
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** @param {unknown} err */
const failure = (err) =>
  err instanceof Error && err.name === 'PhotoError'
    ? {
        photoError: {
          code: /** @type {{ code: string }} */ (/** @type {unknown} */ (err)).code,
          message: err.message,
          inputFault: /** @type {{ inputFault: boolean }} */ (/** @type {unknown} */ (err)).inputFault,
        },
      }
    : { error: err instanceof Error ? err.message : String(err) };

port.on('message', (msg) => {
  try {
    if (msg.type === 'colours') {
      const colours = run.checkColours(msg.input);
      port.postMessage({ id: msg.id, colours }, [/** @type {ArrayBuffer} */ (colours.buffer)]);
    } else if (msg.type === 'check') {
      port.postMessage({ id: msg.id, diagnosis: run.checkPhoto(msg.request) });
    } else if (msg.type === 'warm') {
      run.warmUpCheck(msg.rounds);
      port.postMessage({ id: msg.id });
    }
  } catch (err) {
    port.postMessage({ id: msg.id, ...failure(err) });
  }
});
port.postMessage({ ready: true });
