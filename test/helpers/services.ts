// The services of the database tier, wired as the container wires them but around a given store and
// clock (no HTTP, no model): the repository and ledger-invariant suites share this.
import { CreditsService } from '../../src/services/credits.service.ts';
import { AccountService } from '../../src/services/account.service.ts';
import { BatchService } from '../../src/services/batch.service.ts';
import { EventBus } from '../../src/services/event-bus.ts';
import { FsBlobStore } from '../../src/adapters/blob-store.ts';
import { ImageCodec } from '../../src/adapters/image-codec.adapter.ts';
import type { Store } from '../../src/db/store.ts';

export function dbTierServices(store: Store, dataDir: string, clock: () => number) {
  const credits = new CreditsService();
  const accounts = new AccountService({ store, credits, clock, limits: { photosPerBatch: 200, activeBatches: 2, requestsPerMinute: 60, photosPerHour: 2000, resultsKeptForHours: 2 } });
  const batches = new BatchService({
    store,
    blobs: new FsBlobStore(`${dataDir}/blobs`),
    credits,
    bus: new EventBus(),
    inspector: new ImageCodec(100_000_000),
    clock,
    resultTtlMs: 7_200_000,
    perImageMs: () => 1000,
    modelState: () => 'ready',
    allowPrivateNetworks: false,
  });
  return { credits, accounts, batches };
}
