// Worker thread of the automatic check (photo-check.ts CheckThread): the model's input reduced to the check's
// grid while the model runs, then the check of its mask (check-run.ts), off the API's event loop. The check's
// code is TypeScript, and a worker thread starts without its parent's loader: tsx's is registered first.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
/** @type {typeof import('./check-run.ts')} */
const run = await import('./check-run.ts');
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
