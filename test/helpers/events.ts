// Following events as a client would: an SSE reader over a real socket (fetch), and a webhook receiver
// on loopback that records every request with its raw body and checks its signature with the secret.
import http from 'node:http';
import net from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
  /** Client clock when the message was read. */
  at: number;
}

export interface SseStream {
  status: number;
  headers: Headers;
  messages: SseMessage[];
  /** Resolves with the next message matching `pred` that has not been taken yet. */
  next(pred?: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

function parseBlock(block: string, at: number): SseMessage {
  const m: SseMessage = { at };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) m.comment = line.slice(1).trim();
    else {
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'id' || field === 'event' || field === 'retry') m[field] = value;
      else if (field === 'data') m.data = m.data === undefined ? value : `${m.data}\n${value}`;
    }
  }
  return m;
}

export async function openStream(url: string, headers: Record<string, string>): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const messages: SseMessage[] = [];
  let taken = 0;
  const waiters: (() => void)[] = [];
  const notify = () => {
    for (const w of waiters.splice(0)) w();
  };
  let done = false;
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          messages.push(parseBlock(buffer.slice(0, cut), Date.now()));
          buffer = buffer.slice(cut + 2);
          notify();
        }
      }
    } catch {
      /* closed by us */
    } finally {
      done = true;
      notify();
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    messages,
    ended,
    close: () => abort.abort(),
    async next(pred = () => true, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (; taken < messages.length;) {
          const m = messages[taken++];
          if (pred(m)) return m;
        }
        if (done) throw new Error(`stream ended; read: ${JSON.stringify(messages.map((x) => x.event ?? x.comment))}`);
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `no matching message within ${timeoutMs} ms; read: ${JSON.stringify(messages.map((x) => x.event ?? x.comment))}`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

/** A batch followed to its end as EventSource follows it: messages of every connection, in order. */
export interface FollowedBatch {
  messages: SseMessage[];
  /** Connections made: more than one when the server ended a stream at its time limit. */
  connections: number;
  /** Resolves once job.done has arrived; rejects when a reconnection is refused or too many were needed. */
  ended: Promise<void>;
}

/**
 * Follows a batch's stream until job.done. The server ends a stream after its time limit (ten minutes);
 * like EventSource, this reconnects then with the last id it read as Last-Event-ID, so a batch that runs
 * longer than that is still followed whole, with no gap and no repeat.
 */
export async function followBatch(
  url: string,
  headers: Record<string, string>,
  maxConnections = 5,
): Promise<FollowedBatch> {
  const followed: FollowedBatch = { messages: [], connections: 0, ended: Promise.resolve() };
  const connect = async (lastEventId?: string) => {
    followed.connections++;
    const stream = await openStream(url, lastEventId ? { ...headers, 'last-event-id': lastEventId } : headers);
    if (stream.status !== 200) throw new Error(`the stream answered ${stream.status}`);
    return stream;
  };
  let stream = await connect();
  followed.ended = (async () => {
    for (;;) {
      await stream.ended;
      followed.messages.push(...stream.messages);
      if (stream.messages.some((m) => m.event === 'job.done')) return;
      if (followed.connections >= maxConnections)
        throw new Error(`no job.done after ${followed.connections} connections`);
      const lastId = followed.messages.filter((m) => m.id !== undefined).at(-1)?.id;
      stream = await connect(lastId);
    }
  })();
  return followed;
}

/** Messages carrying an event (not the snapshot, not comments), parsed. */
export function eventsOf(messages: SseMessage[]): { id: number; event: string; body: Record<string, any> }[] {
  return messages
    .filter((m) => m.event && m.event !== 'snapshot')
    .map((m) => ({ id: Number(m.id), event: m.event!, body: JSON.parse(m.data!) }));
}

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: Record<string, any>;
  /** Receiver clock on arrival. */
  at: number;
  /** The answer this request got. */
  answered: number;
}

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Decides each answer: a status, optionally after a delay. Default 200. */
  respond: (req: Received, n: number) => { status: number; delayMs?: number; location?: string };
  waitFor(pred: (all: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: Received[] = [];
  const sockets = new Set<net.Socket>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests,
    respond: () => ({ status: 200 }),
    async waitFor(pred, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(requests)) {
        if (Date.now() > deadline)
          throw new Error(
            `receiver: condition not met within ${timeoutMs} ms; got ${JSON.stringify(requests.map((r) => [r.headers['x-matte-event'], r.headers['x-matte-attempt'], r.answered]))}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        /* recorded raw */
      }
      const r: Received = { headers: req.headers, raw, body, at: Date.now(), answered: 0 };
      const answer = receiver.respond(r, requests.length);
      r.answered = answer.status;
      requests.push(r);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, answer.location ? { location: answer.location } : {});
        res.end('ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiver.port = (server.address() as net.AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks/matte`;
  return receiver;
}

/** Verifies X-Matte-Signature as a receiver should: HMAC-SHA256 over "t.rawBody", timestamp within 300 s. */
export function verifySignature(
  secret: string,
  header: string | undefined,
  raw: Buffer,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  if (Math.abs(nowSeconds - Number(m[1])) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.`).update(raw).digest();
  return timingSafeEqual(expected, Buffer.from(m[2], 'hex'));
}
