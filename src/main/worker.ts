// `bin/matte worker`: a worker process with no public API. It claims photos, runs them, settles them, sends
// webhooks and deletes expired batches, as the worker inside `npm start` does; any number of them share the
// queue through PostgreSQL (leases taken with FOR UPDATE SKIP LOCKED, changes announced with LISTEN/NOTIFY).
// SIGTERM or SIGINT: no new photo is claimed, the photos in flight finish (or, past 25 s, go back to the
// queue at once rather than waiting for their leases to run out), and the process exits within 30 s.
import { loadConfig } from '../config.ts';
import { createContainer } from '../container.ts';
import { startOpsServer } from './ops-server.ts';

const config = loadConfig();
if (!config.databaseUrl.startsWith('postgres')) {
  process.stderr.write(
    'matte worker: a separate worker process needs PostgreSQL (DATABASE_URL=postgres://…); on SQLite, npm start runs the worker in the API process\n',
  );
  process.exit(2);
}
const container = await createContainer(config, { runWorker: true, role: 'worker' });
if (!container.worker) throw new Error('the worker did not start');
const ops = config.metricsPort !== null ? await startOpsServer(container, config.metricsPort, config.host) : null;
void container.warmUp();
container.worker.start();
container.maintenance.start();
container.dispatcher.start();
container.log.info(
  { worker: container.worker.id, pid: process.pid, database: container.store.dialect },
  'matte worker running',
);

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  container.log.info({ signal }, 'worker stopping: finishing the photos in flight');
  const handBack = setTimeout(() => {
    container.log.warn('photos still running after 25 s: handing them back to the queue');
    void container.worker?.handBack();
  }, 25_000);
  handBack.unref();
  setTimeout(() => process.exit(1), 30_000).unref();
  await ops?.close();
  await container.close();
  clearTimeout(handBack);
  container.log.info('worker stopped');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
