// The sentences a refused photo gets, written once: the batch upload, POST /v1/images, the worker and the
// command line (which prints the server's reasons) all word a refusal the same way. Numbers carry thousands
// separators (40,000,000 pixels), sizes are in MiB.

import { INPUT_FORMATS_TEXT } from '@matte/client/formats';

/** A count as the messages write it: with thousands separators (40,000,000). */
export const count = (n: number) => n.toLocaleString('en-US');
const mib = (bytes: number) => `${(Math.round((bytes / 1024 / 1024) * 10) / 10).toLocaleString('en-US')} MiB`;

export const PHOTO_REFUSALS = {
  empty: 'The file is empty (0 bytes).',
  unreadable: `The file is not a readable ${INPUT_FORMATS_TEXT} image.`,
  unsupportedFormat: (format: string | undefined) =>
    `Unsupported image format${format ? ` (${format})` : ''}; send ${INPUT_FORMATS_TEXT}.`,
  tooManyPixels: (maxPixels: number, width?: number, height?: number) =>
    width !== undefined && height !== undefined
      ? `The image is ${count(width)} x ${count(height)} pixels (${count(width * height)}), more than the ${count(maxPixels)}-pixel limit.`
      : `The image has more than the ${count(maxPixels)}-pixel limit.`,
  overImageLimit: (maxBytes: number) => `The photo is larger than the ${mib(maxBytes)} per-photo limit.`,
  overUploadLimit: (maxBytes: number) => `The file is larger than the ${mib(maxBytes)} upload limit.`,
} as const;
