// GET /v1/jobs/{id}/webhooks: the batch's webhook and every delivery with the body it sent (for replay).
import type { DeliveryRow } from '../db/schema.ts';
import type { Store } from '../db/store.ts';
import type { Delivery, WebhookDeliveries } from '../domain/event.schemas.ts';
import type { BatchQueries } from './batch-queries.service.ts';

const num = (v: number | null) => (v === null ? null : Number(v));

function deliveryView(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    event: row.event,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: num(row.next_attempt_at),
    deliveredAt: num(row.delivered_at),
    givenUpAt: num(row.given_up_at),
    lastStatus: num(row.last_status),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    payload: row.payload,
  };
}

export class WebhookService {
  constructor(private readonly deps: { store: Store; queries: BatchQueries; maxAttempts: number }) {}

  async listDeliveries(accountId: string, jobId: string): Promise<WebhookDeliveries> {
    const job = await this.deps.queries.requireJob(accountId, jobId);
    const rows = await this.deps.store.repos.deliveries.listForJob(jobId);
    return {
      jobId,
      webhookUrl: job.webhook_url,
      events: job.webhook_events ? job.webhook_events : null,
      maxAttempts: this.deps.maxAttempts,
      deliveries: rows.map(deliveryView),
    };
  }
}
