// Verifies a webhook delivery: X-Matte-Signature is `t=<unix seconds>,v1=<64 hex>`, and v1 is
// HMAC-SHA256 of `${t}.${rawBody}` under the batch's webhook secret. Web Crypto, so it runs in Node and
// browsers alike; the comparison is crypto.subtle.verify's, which takes the same time for any wrong byte.

export interface VerifyOptions {
  /** Oldest accepted timestamp, in seconds before now (default 300, the spec's recommendation). */
  toleranceSeconds?: number;
  /** The clock, in ms (tests). */
  now?: number;
}

/** The event a verified delivery carries. */
export interface WebhookEvent {
  id: number;
  event: string;
  at: number;
  jobId: string;
  data: Record<string, unknown>;
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

const encoder = new TextEncoder();

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

/**
 * Checks a delivery's signature and age, and returns its event. Pass the raw body exactly as received
 * (before any JSON parsing). Throws WebhookVerificationError for a malformed header, an old timestamp or a
 * signature that does not match.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  signatureHeader: string | null | undefined,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  if (!secret) throw new WebhookVerificationError('no webhook secret given');
  const match = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec((signatureHeader ?? '').trim());
  if (!match) throw new WebhookVerificationError('malformed signature header (expected t=<seconds>,v1=<64 hex>)');
  const t = Number(match[1]);
  const now = (options.now ?? Date.now()) / 1000;
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - t) > tolerance)
    throw new WebhookVerificationError(`timestamp ${t} is outside the ${tolerance}-second tolerance`);
  const body = bytesOf(rawBody);
  const message = new Uint8Array(match[1].length + 1 + body.length);
  message.set(encoder.encode(`${match[1]}.`));
  message.set(body, match[1].length + 1);
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'verify',
  ]);
  const signature = new Uint8Array(match[2].match(/../g)!.map((h) => parseInt(h, 16)));
  if (!(await crypto.subtle.verify('HMAC', key, signature, message)))
    throw new WebhookVerificationError('signature does not match');
  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('signed body is not JSON');
  }
}
