// The output formats' one list (@matte/client/formats): the API's schemas, file names and content types
// are derived from it, so a format added there reaches each of them.
import { describe, expect, it } from 'vitest';
import {
  INPUT_EXTENSIONS,
  INPUT_FORMATS_OR_ZIPS,
  INPUT_FORMATS_TEXT,
  extensionOf,
  FORMAT_FILES,
  formatOfExtension,
  isOutputFormat,
  OUTPUT_FORMATS,
} from '../../packages/client/src/formats.ts';
import { ImageFormat } from '../../src/domain/batch.schemas.ts';
import { DownloadQuery } from '../../src/http/schemas/jobs.schemas.ts';
import { imageContent } from '../../src/http/routes/route-kit.ts';
import { outputName } from '../../src/services/job-view.ts';
import { ACCEPTED_FORMATS } from '../../src/adapters/images/sharp.ts';
import { PHOTO_REFUSALS } from '../../src/domain/photo-refusals.ts';

describe('output formats', () => {
  it('the schemas list exactly the formats, in their order', () => {
    const literals = (schema: { anyOf: { const: string }[] }) => schema.anyOf.map((s) => s.const);
    expect(literals(ImageFormat)).toEqual([...OUTPUT_FORMATS]);
    expect(literals(DownloadQuery.properties.format)).toEqual([...OUTPUT_FORMATS]);
    expect(Object.keys(imageContent())).toEqual(OUTPUT_FORMATS.map((f) => FORMAT_FILES[f].contentType));
  });

  it('names files by the format and reads formats back from extensions', () => {
    expect(OUTPUT_FORMATS.map(extensionOf)).toEqual(['png', 'jpg', 'webp']);
    expect(extensionOf('gif')).toBe('gif'); // an original's own type stays as it is
    expect(formatOfExtension('JPG')).toBe('jpeg');
    expect(formatOfExtension('.jpeg')).toBe('jpeg');
    expect(formatOfExtension('tiff')).toBeUndefined();
    expect(isOutputFormat('webp')).toBe(true);
    expect(isOutputFormat('auto')).toBe(false);
    expect(outputName('shop/mug.final.png', 'jpeg')).toBe('shop/mug.final.jpg');
  });

  it('the input formats: one list for the decoder, file extensions and every message naming them', () => {
    expect([...ACCEPTED_FORMATS]).toEqual(['jpeg', 'png', 'webp']);
    expect([...INPUT_EXTENSIONS]).toEqual(['.jpg', '.jpeg', '.png', '.webp']);
    expect(INPUT_FORMATS_TEXT).toBe('JPEG, PNG or WebP');
    expect(INPUT_FORMATS_OR_ZIPS).toBe('JPEG, PNG, WebP, or ZIPs of them');
    expect(PHOTO_REFUSALS.unreadable).toBe('The file is not a readable JPEG, PNG or WebP image.');
  });
});
