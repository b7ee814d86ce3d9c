// Process entry: loadConfig → createContainer → buildApp → listen; graceful close on SIGINT/SIGTERM.
import { loadConfig } from '../config.ts';
import { createContainer } from '../container.ts';
import { buildApp } from '../app.ts';

const config = loadConfig();
const container = await createContainer(config);
const app = await buildApp(container);
await app.listen({ port: config.port, host: config.host });
container.worker?.start();
container.maintenance.start();
container.dispatcher.start();
container.log.info({ port: config.port, dataDir: config.dataDir, database: container.store.dialect }, 'matte is serving');

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  container.log.info({ signal }, 'shutting down');
  await app.close();
  await container.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
