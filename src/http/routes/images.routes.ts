import type { FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { AppError } from '../../errors.ts';
import { type ImageFormat, JobDefaults, type Optimize } from '../../domain/batch.schemas.ts';
import {
  ImageMultipart,
  ImageMultipartFields,
  ImageRequest,
  type ImageRequest as ImageRequestT,
  ImageResult,
} from '../schemas/images.schemas.ts';
import { cleanFilename, isMultipart, parseJsonField, receiveFormInMemory } from '../multipart.ts';
import { check } from '../validate.ts';
import { imageContent, jsonBody, multipartBodies, problems, sendStored, type RouteApp } from './route-kit.ts';
import { fingerprint, IDEMPOTENCY_RULES, type StoredResponse } from '../../services/idempotency.service.ts';
import { itemView, fileUrl, storedFormat } from '../../services/job-view.ts';
import { fetchOnePhoto } from '../../services/photo-sources.ts';
import { intakeLimits } from '../photo-budget.ts';
import { PHOTO_REFUSALS } from '../../domain/photo-refusals.ts';
import { FORMAT_FILES } from '@matte/client/formats';
import { MAX_WORKING_EDGE } from '../../domain/batch-rules.ts';
import type { ItemMeta } from '../../domain/batch.schemas.ts';

/** What POST /v1/images says of the photo beside the image it answers (declared in the OpenAPI document). */
const SINGLE_PHOTO_HEADERS = {
  'X-Matte-Job-Id': {
    type: 'string',
    examples: ['job_7x23fzmg0wbza5dtdy6w'],
    description: 'The one-photo batch the photo was run in: GET /v1/jobs/{id} reads it.',
  },
  'X-Matte-Item-Id': {
    type: 'string',
    examples: ['img_27gqsbn01yy15e54hb69'],
    description: 'The photo in that batch: its report, re-run, touch-up and files go by this id.',
  },
  'X-Matte-Review': {
    type: 'string',
    enum: ['none', 'red'],
    examples: ['none'],
    description:
      '`none`: the automatic check passed the cut-out. `red`: it judged it broken, so it was not charged (`X-Matte-Charged: 0`); the image is answered all the same.',
  },
  'X-Matte-Charged': {
    type: 'integer',
    minimum: 0,
    examples: [1],
    description: 'Credits the photo cost: 1 for a clean result (2 on the heavy tier), 0 when the check flagged it.',
  },
  'X-Matte-Score': {
    type: 'number',
    minimum: 0,
    maximum: 100,
    examples: [71.2],
    description: "The check's score, 0-100; under 50 is `red`.",
  },
  'X-Matte-Scaled-From': {
    type: 'string',
    pattern: '^[0-9]+x[0-9]+$',
    examples: ['6000x300'],
    description: `Only when the photo was larger than ${MAX_WORKING_EDGE} px on its long side: its size, \`<width>x<height>\`. The cut-out and the image answered are made at ${MAX_WORKING_EDGE} px on the long side.`,
  },
};

/** X-Matte-Scaled-From for a photo whose cut-out was made smaller than the upload. */
function scaledFrom(meta: ItemMeta | undefined): Record<string, string> {
  const { source, cutout } = meta ?? {};
  return source && cutout && (cutout.width < source.width || cutout.height < source.height)
    ? { 'x-matte-scaled-from': `${source.width}x${source.height}` }
    : {};
}

interface ImageInput {
  name: string;
  data: Buffer;
  settings?: JobDefaults;
  response: 'image' | 'json';
  format?: ImageFormat;
  optimize: Optimize;
  timeout: number;
}

function decodeBase64(value: string): Buffer {
  const body = value.replace(/^data:[^;,]*;base64,/, '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(body) || body.length === 0) {
    throw new AppError('VALIDATION', 'imageBase64 is not base64.', {
      errors: [{ path: 'body/imageBase64', message: 'must be base64' }],
    });
  }
  return Buffer.from(body, body.includes('-') || body.includes('_') ? 'base64url' : 'base64');
}

export function registerImageRoutes(
  app: RouteApp,
  c: Pick<Container, 'accounts' | 'config' | 'files' | 'idempotency' | 'images' | 'limits'>,
): void {
  const { config, images, idempotency } = c;

  async function readInput(request: FastifyRequest, body: ImageRequestT | undefined): Promise<ImageInput> {
    if (isMultipart(request)) {
      const form = await receiveFormInMemory(request, { fileSize: config.maxImageBytes, files: 1 });
      const fields: Record<string, unknown> = { ...form.fields };
      if (typeof fields.timeout === 'string' && /^\d{1,3}$/.test(fields.timeout))
        fields.timeout = Number(fields.timeout);
      const checked = check(ImageMultipartFields, fields, 'body');
      const file = form.files[0];
      if (!file || file.field !== 'file')
        throw new AppError('VALIDATION', 'Send the photo in the multipart field "file".', {
          errors: [{ path: 'body/file', message: 'required' }],
        });
      if (file.truncated)
        throw new AppError(
          'PROCESSING_FAILED',
          PHOTO_REFUSALS.overImageLimit(config.maxImageBytes),
          { reason: 'TOO_LARGE' },
          422,
        );
      const settings = parseJsonField(checked.settings, 'settings');
      return {
        name: file.filename,
        data: file.data,
        settings: settings === undefined ? undefined : check(JobDefaults, settings, 'body/settings'),
        response: checked.response ?? 'image',
        format: checked.format,
        optimize: checked.optimize ?? 'marketplace',
        timeout: checked.timeout ?? 60,
      };
    }
    if (!body)
      throw new AppError('VALIDATION', 'Send multipart/form-data with a "file", or a JSON ImageRequest.', {
        errors: [{ path: 'body', message: 'required' }],
      });
    if ((body.imageUrl === undefined) === (body.imageBase64 === undefined)) {
      throw new AppError('VALIDATION', 'Give exactly one of imageUrl and imageBase64.', {
        errors: [{ path: 'body/imageUrl', message: 'exactly one of imageUrl, imageBase64' }],
      });
    }
    let data: Buffer;
    let name = body.name;
    if (body.imageBase64 !== undefined) {
      data = decodeBase64(body.imageBase64);
      if (data.length > config.maxImageBytes)
        throw new AppError(
          'PROCESSING_FAILED',
          PHOTO_REFUSALS.overImageLimit(config.maxImageBytes),
          { reason: 'TOO_LARGE' },
          422,
        );
    } else {
      data = await fetchOnePhoto(body.imageUrl!, config);
      name ??= cleanFilename(decodeURIComponent(new URL(body.imageUrl!).pathname), 'image');
    }
    return {
      name: name ?? 'image',
      data,
      settings: body.settings,
      response: body.response ?? 'image',
      format: body.format,
      optimize: body.optimize ?? 'marketplace',
      timeout: body.timeout ?? 60,
    };
  }

  multipartBodies.set('POST /v1/images', ImageMultipart);
  app.post(
    '/v1/images',
    {
      schema: {
        operationId: 'cutOutImage',
        summary: 'Cut out one photo: creates and starts a one-photo batch and waits for the result',
        description:
          'Multipart (`file`, `settings`, `response`, `format`, `optimize`, `timeout`) or JSON ImageRequest (`imageUrl` or `imageBase64`). ' +
          'Answers the image with the headers X-Matte-Job-Id, X-Matte-Item-Id, X-Matte-Review, X-Matte-Charged and X-Matte-Score (and X-Matte-Scaled-From when the photo was larger than the largest side a cut-out is made at), or ImageResult with response=json; 202 ImageResult when still processing at `timeout`. ' +
          '**A 200 is not always a clean result**: `X-Matte-Review: red` (and `X-Matte-Charged: 0`) says the automatic check judged the cut-out broken, so it was not charged; the image is answered all the same, and GET /v1/jobs/{id}/review says why. ' +
          `The cut-out is made at the photo's size up to ${MAX_WORKING_EDGE} px on its long side: a larger photo (a 6000x300 panorama) is answered at that size (4096x205), as every output of a batch is. ` +
          '422 PROCESSING_FAILED `reason`: INVALID_IMAGE, TOO_LARGE, NO_SUBJECT (the input is at fault), URL_REFUSED, URL_UNREACHABLE (imageUrl could not be fetched); 503 PROCESSING_FAILED reason PROCESSING_FAILED when our side failed. Nothing is charged on any of them. ' +
          IDEMPOTENCY_RULES +
          " Counts one photo against the key's hourly budget.",
        tags: ['single photo'],
        headers: {
          type: 'object',
          properties: { 'idempotency-key': { type: 'string', pattern: '^[A-Za-z0-9._:-]{8,128}$' } },
        },
        body: jsonBody(ImageRequest),
        response: {
          200: {
            description: 'The cut-out image, or ImageResult with response=json',
            headers: SINGLE_PHOTO_HEADERS,
            content: {
              ...imageContent(),
              'application/json': { schema: ImageResult },
            },
          },
          202: ImageResult,
          ...problems(400, 402, 409, 422, 503, 504),
        },
      },
      bodyLimit: Math.ceil((config.maxImageBytes * 4) / 3) + 64 * 1024,
    },
    async (request, reply) => {
      const accountId = request.auth.accountId;
      const key = idempotency.checkKey(request.headers['idempotency-key']);
      const input = await readInput(request, request.body);
      const print = fingerprint(input.data, JSON.stringify({ ...input, data: undefined }));
      const result = await idempotency.run(accountId, 'images', key, print, async (): Promise<StoredResponse> => {
        // Inside the idempotent operation: replaying an earlier answer spends no photo budget.
        const limits = await intakeLimits(c, request);
        const outcome = await images.process(
          accountId,
          {
            name: input.name,
            data: input.data,
            settings: input.settings,
            timeoutMs: input.timeout * 1000,
            encoding: { format: input.format, optimize: input.optimize },
          },
          limits,
        );
        const item = itemView(outcome.item);
        const charged = outcome.item.status === 'done' && outcome.item.refunded === 0 ? outcome.item.charged : 0;
        const json: typeof ImageResult.static = {
          jobId: outcome.jobId,
          itemId: item.id,
          status: outcome.state,
          charged,
          review: item.review,
          refunded: item.refunded,
          fileUrl: fileUrl(outcome.jobId, item.id, 'output', item.rev),
          statusUrl: `/v1/jobs/${outcome.jobId}`,
          reviewUrl: `/v1/jobs/${outcome.jobId}/review`,
          item,
        };
        const jsonHeaders = { 'content-type': 'application/json; charset=utf-8' };
        if (outcome.state === 'processing')
          return { status: 202, headers: jsonHeaders, body: Buffer.from(JSON.stringify(json)) };
        if (input.response === 'json')
          return { status: 200, headers: jsonHeaders, body: Buffer.from(JSON.stringify(json)) };
        // Stored as asked (format, optimize): the answer is the stored file, the same as behind fileUrl.
        const data = await c.files.storedOutput(outcome.item);
        const format = storedFormat(outcome.item);
        return {
          status: 200,
          headers: {
            'content-type': FORMAT_FILES[format].contentType,
            'x-matte-job-id': outcome.jobId,
            'x-matte-item-id': item.id,
            'x-matte-review': item.review,
            'x-matte-charged': String(charged),
            'x-matte-score': String(item.quality?.score ?? ''),
            ...scaledFrom(item.meta),
          },
          body: data,
        };
      });
      return sendStored(reply, result);
    },
  );
}
