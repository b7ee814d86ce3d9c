// Passwords are stored as scrypt hashes (memory-hard: N=2^15, r=8 → 32 MiB per check, about 50-100 ms
// on one core here), computed on libuv's pool so the event loop stays free.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
// scrypt needs 128·N·r bytes (32 MiB); node's default ceiling is exactly that, so give it room.
const MAX_MEM = 64 * 1024 * 1024;
export const MIN_PASSWORD_LENGTH = 10;

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFKC'), salt, KEY_BYTES, { N: n, r, p, maxmem: MAX_MEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Constant-time comparison; a missing hash still costs one scrypt, so unknown addresses take as long as wrong passwords. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = stored?.split('$');
  if (!parts || parts.length !== 6 || parts[0] !== 'scrypt') {
    await scrypt(password, randomBytes(16), N, R, P);
    return false;
  }
  const [, n, r, p, salt, expected] = parts;
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  const want = Buffer.from(expected, 'base64url');
  return want.length === key.length && timingSafeEqual(want, key);
}
