// Process entry: loadConfig → createContainer → buildApp → listen; graceful close on SIGINT/SIGTERM.
import { loadConfig, modelDescription } from '../config.ts';
import { createContainer } from '../container.ts';
import { buildApp } from '../app.ts';
import type { Socket } from 'node:net';
import { startOpsServer } from './ops-server.ts';

const config = loadConfig();
const container = await createContainer(config);
const app = await buildApp(container);
// The cut-out writer's threads start and optimise their code while the server opens.
void container.warmUp();
// Connections that have not sent a byte yet hold no request: a stop closes them at once (Node would
// keep them until its headers timeout, a minute).
const sockets = new Set<Socket>();
app.server.on('connection', (socket: Socket) => {
  sockets.add(socket);
  socket.once('close', () => sockets.delete(socket));
});
await app.listen({ port: config.port, host: config.host });
const ops = config.metricsPort !== null ? await startOpsServer(container, config.metricsPort, config.host) : null;
container.worker?.start();
container.maintenance.start();
container.dispatcher.start();
// One line for the person who started it: where the API and the studio are, and how to stop it (npm start
// does not pass a plain `kill` on to this process; Ctrl-C, or this pid, does).
const base = config.publicBaseUrl;
const started =
  `Matte is serving: API ${base}/v1 (reference: ${base}/v1/openapi.json), studio ${base}/studio/, ` +
  `${container.worker ? `with its photo worker on ${modelDescription(config)}` : 'API only (MATTE_WORKER=0)'}; stop it with Ctrl-C or kill ${process.pid}`;
// On a terminal: that line, plain; the log then says only what needs a look (warnings). Elsewhere: a log record.
if (container.logForPerson) process.stdout.write(`${started}\n`);
else
  container.log.info(
    { port: config.port, dataDir: config.dataDir, database: container.store.dialect, pid: process.pid },
    started,
  );

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  container.log.info({ signal }, 'shutting down');
  // Requests in flight may finish; after 10 s, connections still open (a client that connected and
  // never sent a request, a slow download) are cut so that a stop is bounded.
  setTimeout(() => app.server.closeAllConnections(), 10_000).unref();
  for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
  await app.close();
  await ops?.close();
  await container.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
