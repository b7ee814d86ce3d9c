// X-Matte-Signature: t=<unix seconds>,v1=<HMAC-SHA256 of "t.rawBody" with the batch's webhook secret, hex>.
import { createHmac } from 'node:crypto';

export function signWebhook(secret: string, body: Buffer, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}
