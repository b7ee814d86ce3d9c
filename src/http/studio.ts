// The studio, served by Matte itself at /studio/ (same origin as the API, so the session cookie and its
// CSRF token work unchanged). `npm install` builds it into studio/dist (the root package's `prepare`);
// without a build, /studio/ says how to make one instead of failing quietly.
//
// The page's Content-Security-Policy allows scripts, styles and connections from this origin only, and no
// inline code at all; images also from blob: (previews the studio renders through the API).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

export const STUDIO_DIR = fileURLToPath(new URL('../../studio/dist/', import.meta.url));

export const STUDIO_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': STUDIO_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

/** The icon browsers ask for at /favicon.ico (an SVG: every current browser takes one there). */
const ICON = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
    '<rect width="32" height="32" rx="7" fill="#1d4ed8"/>' +
    '<rect x="5" y="5" width="22" height="22" rx="3" fill="#fff"/>' +
    '<path d="M11 24c0-6 2-11 5-14 3 3 5 8 5 14z" fill="#1d4ed8"/></svg>',
);

export async function registerStudio(app: FastifyInstance, dir = STUDIO_DIR): Promise<void> {
  const index = path.join(dir, 'index.html');
  const built = fs.existsSync(index);
  const page = built
    ? fs.readFileSync(index)
    : Buffer.from(
        '<!doctype html><html lang="en"><meta charset="utf-8"><title>Matte studio not built</title>' +
          '<h1>The studio is not built</h1><p>Run <code>npm install</code> (or <code>npm run prepare</code>) in the ' +
          'Matte folder, then restart the server. The API at /v1 works without it.</p></html>',
      );
  const send = (reply: FastifyReply) =>
    reply
      .code(built ? 200 : 503)
      .headers(PAGE_HEADERS)
      .type('text/html; charset=utf-8')
      .send(page);

  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/studio/'));
  for (const url of ['/favicon.ico', '/studio/favicon.svg'])
    app.get(url, { schema: { hide: true } }, (_request, reply) =>
      reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(ICON),
    );
  app.get('/studio', { schema: { hide: true } }, (_request, reply) => reply.redirect('/studio/'));
  if (built) {
    // Hashed file names: cached for a year, never revalidated.
    await app.register(fastifyStatic, {
      root: path.join(dir, 'assets'),
      prefix: '/studio/assets/',
      decorateReply: false,
      immutable: true,
      maxAge: '365d',
      index: false,
      setHeaders: (res) => res.setHeader('x-content-type-options', 'nosniff'),
    });
  }
  // Every other path under /studio/ is a page of the app (it routes in the browser).
  app.get('/studio/', { schema: { hide: true } }, (_request, reply) => send(reply));
  app.get('/studio/*', { schema: { hide: true } }, (request, reply) => {
    if (request.url.startsWith('/studio/assets/')) return reply.callNotFound();
    return send(reply);
  });
}
