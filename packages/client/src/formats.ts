// The image formats Matte writes, the one list every schema, file name, content type and encoder over
// formats is derived from, on the server, in the studio and in clients: adding one here makes the type
// checker name every place that must handle it.

/** The formats of a rendered output, in the order the API documents them. */
export const OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** How each format is written to a file and served. */
export const FORMAT_FILES: Readonly<Record<OutputFormat, { extension: string; contentType: string; label: string }>> = {
  png: { extension: 'png', contentType: 'image/png', label: 'PNG' },
  jpeg: { extension: 'jpg', contentType: 'image/jpeg', label: 'JPEG' },
  webp: { extension: 'webp', contentType: 'image/webp', label: 'WebP' },
};

export function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

/** A format's file extension; a name that is not a format (an original's own type) stays as it is. */
export function extensionOf(format: string): string {
  return isOutputFormat(format) ? FORMAT_FILES[format].extension : format;
}

/** The output format of a file extension (`jpg` and `jpeg` both JPEG), or undefined. */
export function formatOfExtension(extension: string): OutputFormat | undefined {
  const ext = extension.toLowerCase().replace(/^\./, '');
  return OUTPUT_FORMATS.find((f) => f === ext || FORMAT_FILES[f].extension === ext);
}

/**
 * The formats Matte reads a photo in (as libvips names them), with their file extensions: the one list that
 * intake, the command line, the studio and every message naming them read.
 */
export const INPUT_FORMATS = {
  jpeg: { label: 'JPEG', extensions: ['.jpg', '.jpeg'] },
  png: { label: 'PNG', extensions: ['.png'] },
  webp: { label: 'WebP', extensions: ['.webp'] },
} as const;

const INPUT_LABELS: string[] = Object.values(INPUT_FORMATS).map((f) => f.label);

/** File extensions of a photo Matte reads, with the dot, lower case. */
export const INPUT_EXTENSIONS: ReadonlySet<string> = new Set(Object.values(INPUT_FORMATS).flatMap((f) => f.extensions));

/** The input formats in words: `JPEG, PNG or WebP`. */
export const INPUT_FORMATS_TEXT = `${INPUT_LABELS.slice(0, -1).join(', ')} or ${INPUT_LABELS.at(-1)}`;

/** The input formats and ZIPs, as a list: `JPEG, PNG, WebP, or ZIPs of them`. */
export const INPUT_FORMATS_OR_ZIPS = `${INPUT_LABELS.join(', ')}, or ZIPs of them`;
