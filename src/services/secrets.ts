// Secrets handed out once (API keys, licence codes, session cookies): random, and stored only as SHA-256.
import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function sha256(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** `prefix` then `length` base62 characters (5.95 bits each). */
export function newSecret(prefix: string, length: number): string {
  const bytes = randomBytes(length);
  let out = prefix;
  // 62 does not divide 256; the bias of byte % 62 (at most 1/256 per character) is harmless at this length.
  for (const b of bytes) out += BASE62[b % 62];
  return out;
}
