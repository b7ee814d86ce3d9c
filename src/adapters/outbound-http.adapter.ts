// Outbound calls (image links, ZIP links and webhooks) refuse loopback, private, link-local and other
// non-public addresses unless MATTE_ALLOW_PRIVATE_NETWORKS=1. The check runs on the resolved address
// at connect time (a custom lookup), so a DNS name that points inward, or re-points between checks, is caught.
import http from 'node:http';
import https from 'node:https';
import dns from 'node:dns';
import net from 'node:net';
import { errorCode } from '../errors.ts';

const blocked = new net.BlockList();
for (const [addr, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(addr, prefix, 'ipv4');
for (const [addr, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
] as const)
  blocked.addSubnet(addr, prefix, 'ipv6');

export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

export class OutboundError extends Error {
  constructor(
    message: string,
    readonly kind: 'refused' | 'too-large' | 'http' | 'network' | 'timeout',
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface FetchOptions {
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
}

export interface FetchResult {
  data: Buffer;
  contentType: string | undefined;
  finalUrl: string;
}

/**
 * Why a URL is not called, before any connection: not http(s), credentials in it, or an IP literal
 * that is private (names are checked on the addresses they resolve to, in guardedLookup).
 */
function refusal(url: URL, allowPrivate: boolean): OutboundError | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return new OutboundError('Only http and https URLs are reached.', 'refused');
  if (url.username || url.password) return new OutboundError('URLs with credentials are not reached.', 'refused');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) && !allowPrivate && isPrivateAddress(host))
    return new OutboundError('Private and loopback addresses are not reached.', 'refused');
  return null;
}

/** A request's error as the caller sees it: refused (a private address), or a network failure. */
function asOutboundError(err: Error, failed: string): OutboundError {
  if (err instanceof OutboundError) return err;
  const code = errorCode(err);
  if (code === 'EREFUSEDPRIVATE')
    return new OutboundError('Private and loopback addresses are not reached.', 'refused');
  return new OutboundError(`${failed} (${code ?? err.message}).`, 'network');
}

function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const bad = !allowPrivate && addresses.find((a) => isPrivateAddress(a.address));
      if (bad || addresses.length === 0) {
        return callback(
          Object.assign(new Error(`refused: ${hostname} resolves to a non-public address`), {
            code: 'EREFUSEDPRIVATE',
          }),
          '',
          4,
        );
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** GET a public http(s) URL with a byte cap, a total timeout and at most a few checked redirects. */
export async function fetchPublic(rawUrl: string, opts: FetchOptions): Promise<FetchResult> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new OutboundError('Not a valid URL.', 'refused');
  }
  for (let redirects = 0; ; redirects++) {
    const refused = refusal(url, opts.allowPrivate);
    if (refused) throw refused;
    const response = await requestOnce(url, opts);
    if (response.redirect) {
      if (redirects >= (opts.maxRedirects ?? 3))
        throw new OutboundError('Too many redirects.', 'http', response.status);
      url = new URL(response.redirect, url);
      continue;
    }
    return { data: response.data!, contentType: response.contentType, finalUrl: url.toString() };
  }
}

function requestOnce(
  url: URL,
  opts: FetchOptions,
): Promise<{ status: number; redirect?: string; data?: Buffer; contentType?: string }> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.get(
      url,
      {
        lookup: guardedLookup(opts.allowPrivate),
        timeout: opts.timeoutMs,
        headers: { 'user-agent': 'Matte/1.0', accept: 'image/*, application/zip' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          return resolve({ status, redirect: res.headers.location });
        }
        if (status < 200 || status >= 300) {
          res.resume();
          return reject(new OutboundError(`The link answered HTTP ${status}.`, 'http', status));
        }
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > opts.maxBytes) {
          res.destroy();
          return reject(new OutboundError(`The linked file is larger than ${opts.maxBytes} bytes.`, 'too-large'));
        }
        const chunks: Buffer[] = [];
        let total = 0;
        res.on('data', (chunk: Buffer) => {
          total += chunk.length;
          if (total > opts.maxBytes) {
            res.destroy();
            reject(new OutboundError(`The linked file is larger than ${opts.maxBytes} bytes.`, 'too-large'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status, data: Buffer.concat(chunks), contentType: res.headers['content-type'] }));
        res.on('error', (err) => reject(new OutboundError(err.message, 'network')));
      },
    );
    const deadline = setTimeout(
      () => req.destroy(new OutboundError('The link did not answer in time.', 'timeout')),
      opts.timeoutMs,
    );
    deadline.unref();
    req.on('close', () => clearTimeout(deadline));
    req.on('error', (err) => reject(asOutboundError(err, 'The link could not be fetched')));
  });
}

export interface PostOptions {
  allowPrivate: boolean;
  /** The whole attempt: connect, send, and the answer's status line. */
  timeoutMs: number;
  headers: Record<string, string>;
}

/**
 * POST a body to a public http(s) URL, once: redirects are never followed (a 3xx is the answer), so
 * a receiver cannot bounce the request to a private address. Resolves with the status of any answer;
 * rejects with OutboundError when there is none (refused address, network error, timeout).
 */
export async function postPublic(rawUrl: string, body: Buffer, opts: PostOptions): Promise<{ status: number }> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new OutboundError('Not a valid URL.', 'refused');
  }
  const refused = refusal(url, opts.allowPrivate);
  if (refused) throw refused;
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    // A fresh connection per attempt: a pooled socket the receiver closed while idle would fail the
    // attempt for nothing, and the answer limit counts from the connect.
    const req = client.request(
      url,
      {
        method: 'POST',
        agent: false,
        lookup: guardedLookup(opts.allowPrivate),
        headers: { ...opts.headers, 'content-length': String(body.length) },
      },
      (res) => {
        clearTimeout(deadline);
        // The answer's body is not needed: read and dropped, at most 64 KiB of it.
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > 65_536) res.destroy();
        });
        res.on('error', () => undefined);
        resolve({ status: res.statusCode ?? 0 });
      },
    );
    const deadline = setTimeout(
      () => req.destroy(new OutboundError(`No answer within ${opts.timeoutMs} ms.`, 'timeout')),
      opts.timeoutMs,
    );
    req.on('error', (err) => {
      clearTimeout(deadline);
      reject(asOutboundError(err, 'The request failed'));
    });
    req.end(body);
  });
}
