// The one place errors become application/problem+json (RFC 9457), as the spec's Errors section defines.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CODES, type ErrorCode, infrastructureError } from '../../errors.ts';
import type { ProblemExtras } from '../../domain/problem-extras.ts';
import { RateLimitedError } from '../../services/rate-limit.service.ts';
import { setRateLimitHeaders } from './rate-limit-headers.ts';

function problemBody(baseUrl: string, code: ErrorCode, detail: string, extras: ProblemExtras = {}, status?: number) {
  return {
    type: `${baseUrl}/docs/errors#${code}`,
    title: ERROR_CODES[code].title,
    status: status ?? ERROR_CODES[code].status,
    code,
    detail,
    ...extras,
  };
}

function sendProblem(reply: FastifyReply, baseUrl: string, err: AppError): FastifyReply {
  if (err.extras.retryAfter !== undefined) reply.header('retry-after', String(err.extras.retryAfter));
  if (err instanceof RateLimitedError) setRateLimitHeaders(reply, err.windows);
  // The first answer to an Idempotency-Key, given again (see services/idempotency.service.ts).
  if (err.replayed) reply.header('idempotent-replayed', 'true');
  return reply
    .code(err.status)
    .type('application/problem+json')
    .send(problemBody(baseUrl, err.code, err.message, err.extras, err.status));
}

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

/**
 * A value outside a list of literals (a union of constants: `mode`, `tier`, …) fails each constant and then the
 * union: Ajv says "must be equal to constant" once a choice and "must match a schema in anyOf". Said once instead,
 * with the choices: "must be one of: erase, restore".
 */
function withChoices(issues: ValidationIssue[]): ValidationIssue[] {
  const choices = new Map<string, string[]>();
  for (const v of issues) {
    if (v.keyword !== 'const') continue;
    const list = choices.get(v.instancePath) ?? [];
    list.push(String(v.params.allowedValue));
    choices.set(v.instancePath, list);
  }
  const unions = new Set(
    issues.filter((v) => v.keyword === 'anyOf' && choices.has(v.instancePath)).map((v) => v.instancePath),
  );
  return issues.flatMap((v) => {
    if (!unions.has(v.instancePath)) return [v];
    if (v.keyword === 'const') return [];
    if (v.keyword === 'anyOf') return [{ ...v, message: `must be one of: ${choices.get(v.instancePath)!.join(', ')}` }];
    return [v];
  });
}

/** Fastify's own errors (validation, body parsing, limits) mapped onto the spec's codes. */
function fromFastify(err: FastifyError): AppError {
  if (err.validation) {
    const where = err.validationContext ?? 'body';
    const errors = withChoices(err.validation).map((v) => {
      const missing = v.keyword === 'required' ? `/${String(v.params.missingProperty)}` : '';
      const extra = v.keyword === 'additionalProperties' ? `/${String(v.params.additionalProperty)}` : '';
      const message = v.keyword === 'additionalProperties' ? 'is not a known field' : (v.message ?? 'is invalid');
      return { path: `${where}${v.instancePath}${missing}${extra}`, message };
    });
    const first = errors[0];
    return new AppError('VALIDATION', first ? `${first.path} ${first.message}` : 'The request is invalid.', { errors });
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('VALIDATION', 'The body is not valid JSON.', {
        errors: [{ path: 'body', message: err.message }],
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new AppError('TOO_LARGE', err.message);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Send application/json or multipart/form-data as the endpoint describes.',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('URI_TOO_LONG', 'A path parameter is longer than any id the API hands out.');
    case 'FST_ERR_BAD_URL':
      return new AppError('VALIDATION', 'The request path is not a valid URL (bad percent-encoding).', {
        errors: [{ path: 'url', message: 'malformed' }],
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_PROTO_VIOLATION':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new AppError('VALIDATION', err.message);
    default:
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500)
        return new AppError('VALIDATION', err.message);
      return new AppError('INTERNAL', 'Something went wrong on our side; nothing was charged.');
  }
}

/**
 * A request refused while its body is still arriving (too large, over a rate limit, unauthenticated, no
 * such endpoint): answering at once and closing would reset the connection under the client's upload, and
 * Node's fetch, curl and browsers would report a failed request instead of the answer. Read the rest
 * (discarded, within a bound), then answer with `Connection: close`.
 */
async function settleBody(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const raw = request.raw;
  if (raw.complete || raw.readableEnded || raw.destroyed) return;
  await discardRest(raw, DISCARD_LIMIT);
  reply.header('connection', 'close');
}

/** How much of a refused body is read and thrown away before the 413, and for how long at most. */
const DISCARD_LIMIT = { bytes: 1024 * 1024 * 1024, ms: 60_000 };

/**
 * Reads the rest of a request's body without keeping it, until it ends, `limit.bytes` have passed, or
 * `limit.ms` have. Past the bound the answer is sent anyway (and the connection closed under the upload).
 */
function discardRest(raw: IncomingMessage, limit: { bytes: number; ms: number }): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', done).off('close', done).off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit.bytes) done();
    };
    const timer = setTimeout(done, limit.ms);
    raw.on('data', onData).on('end', done).on('close', done).on('error', done);
    raw.resume();
  });
}

/**
 * Errors Node's HTTP parser meets before Fastify sees a request (headers over 16 KB, a malformed
 * request line, a client too slow to send its headers) are written on the socket as problem+json too.
 */
export function clientErrorHandler(baseUrl: string) {
  return function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const problem =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('HEADERS_TOO_LARGE', 'The request headers are larger than 16 KB.')
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new AppError('REQUEST_TIMEOUT', 'The request was not received in time.')
          : new AppError('VALIDATION', 'The request is not well-formed HTTP.', {
              errors: [{ path: 'request', message: err.code ?? 'malformed' }],
            });
    const body = JSON.stringify(problemBody(baseUrl, problem.code, problem.message, problem.extras));
    const reason =
      problem.status === 431
        ? 'Request Header Fields Too Large'
        : problem.status === 408
          ? 'Request Timeout'
          : 'Bad Request';
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${problem.status} ${reason}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  };
}

/** Fastify's own early answers (an over-long path parameter, a malformed URL) go through the error handler. */
export function frameworkErrors(baseUrl: string) {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) =>
    sendProblem(reply, baseUrl, fromFastify(error));
}

export function registerProblemHandling(app: FastifyInstance, baseUrl: string): void {
  app.setErrorHandler(async (error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    const err = error instanceof AppError ? error : (infrastructureError(error) ?? fromFastify(error));
    await settleBody(request, reply);
    if (err.status === 503 || err.status === 507)
      request.log.warn({ code: err.code, cause: error.message, reqId: request.id }, 'request refused: infrastructure');
    else if (err.status >= 500) request.log.error({ err: error, reqId: request.id }, 'request failed');
    else request.log.info({ code: err.code, detail: err.message }, 'request refused');
    return sendProblem(reply, baseUrl, err);
  });
  app.setNotFoundHandler(async (request, reply) => {
    await settleBody(request, reply);
    return sendProblem(
      reply,
      baseUrl,
      new AppError('NOT_FOUND', `No endpoint ${request.method} ${request.url.split('?')[0]}.`),
    );
  });
}
