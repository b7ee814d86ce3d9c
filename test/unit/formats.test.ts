// The output formats' one list (@matte/client/formats): the API's schemas, file names and content types
// are derived from it, so a format added there reaches each of them.
import { describe, expect, it } from 'vitest';
import {
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
});
