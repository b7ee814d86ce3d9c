// The services of the database tier, wired as the container wires them but around a given store and
// clock (no HTTP, no model): the repository and ledger-invariant suites share this.
import { CreditsService } from '../../src/services/credits.service.ts';
import { AccountService } from '../../src/services/account.service.ts';
import { BatchService } from '../../src/services/batch.service.ts';
import { BatchQueries } from '../../src/services/batch-queries.service.ts';
import { BatchProgress } from '../../src/services/batch-progress.service.ts';
import { IntakeService } from '../../src/services/intake.service.ts';
import { PhotoQueue } from '../../src/services/photo-queue.service.ts';
import { LocalEventBus } from '../../src/adapters/event-bus.ts';
import { FsBlobStore } from '../../src/adapters/blob-store.ts';
import { ImageDecoder } from '../../src/adapters/images/decoder.ts';
import { ImageRenderer } from '../../src/adapters/images/renderer.ts';
import type { Store } from '../../src/db/store.ts';

export function dbTierServices(store: Store, dataDir: string, clock: () => number) {
  const credits = new CreditsService();
  const accounts = new AccountService({
    store,
    credits,
    clock,
    limits: {
      photosPerBatch: 200,
      activeBatches: 2,
      requestsPerMinute: 60,
      photosPerHour: 2000,
      resultsKeptForHours: 2,
    },
    heavyModel: false,
  });
  const blobs = new FsBlobStore(`${dataDir}/blobs`);
  const bus = new LocalEventBus();
  const decoder = new ImageDecoder(100_000_000);
  const renderer = new ImageRenderer(100_000_000);
  const inspector = {
    probe: (data: Buffer) => decoder.probe(data),
    thumbnail: (data: Buffer) => renderer.thumbnail(data),
  };
  const queries = new BatchQueries({ store, bus, clock, perImageMs: () => 1000 });
  const progress = new BatchProgress(7_200_000);
  const batches = new BatchService({
    store,
    blobs,
    credits,
    bus,
    inspector,
    clock,
    queries,
    progress,
    modelState: () => 'ready',
    allowPrivateNetworks: false,
  });
  const intake = new IntakeService({ store, blobs, inspector, bus, clock, queries });
  const queue = new PhotoQueue({ store, blobs, credits, bus, clock, progress, resultTtlMs: 7_200_000 });
  return { credits, accounts, batches, queries, intake, queue, bus };
}
