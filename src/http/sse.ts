// Server-Sent Events framing (https://html.spec.whatwg.org/multipage/server-sent-events.html): fields
// `retry`, `id`, `event`, `data`, a blank line after each message; a line starting with ":" is a comment.
import type { StreamMessage } from '../services/event-stream.service.ts';

/** Browsers wait this long before reconnecting a dropped stream. */
const RETRY_MS = 3000;

export function sseFrame(m: StreamMessage): string {
  switch (m.kind) {
    case 'snapshot':
      return `retry: ${RETRY_MS}\n${m.id === null ? '' : `id: ${m.id}\n`}event: snapshot\ndata: ${JSON.stringify(m.data)}\n\n`;
    case 'event':
      return `id: ${m.event.id}\nevent: ${m.event.event}\ndata: ${JSON.stringify(m.event)}\n\n`;
    case 'keepalive':
      return ': keep-alive\n\n';
  }
}
