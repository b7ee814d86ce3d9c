// Where a batch's files live in the BlobStore: everything of a batch under one prefix, so deleting
// the batch (or a photo) removes its files with one prefix delete.
export const blobKeys = {
  job: (jobId: string) => `jobs/${jobId}`,
  background: (jobId: string) => `jobs/${jobId}/background`,
  input: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/input`,
  inputThumb: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/input-thumb.webp`,
  cutout: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/cutout.png`,
  output: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/output`,
  thumb: (jobId: string, itemId: string) => `jobs/${jobId}/${itemId}/thumb.webp`,
  /** A file of one result (one model run or one re-render): `token` is fresh each time. */
  result: (jobId: string, itemId: string, token: string, file: 'cutout.png' | 'output' | 'thumb.webp') =>
    `jobs/${jobId}/${itemId}/${token}-${file}`,
};

export interface ResultFiles {
  /** The cut-out the files are drawn from: the seller's touched-up one while there is one. */
  cutout: string;
  output: string;
  thumb: string;
  /** The model's own cut-out, kept while a touch-up replaces it. */
  modelCutout?: string;
}

/** Where a photo's current result is: the keys on its row, or the fixed keys of photos finished before they were named. */
export function resultFiles(row: {
  job_id: string;
  id: string;
  cutout_blob: string | null;
  output_blob: string | null;
  thumb_blob: string | null;
  model_cutout_blob: string | null;
}): ResultFiles {
  const files: ResultFiles = {
    cutout: row.cutout_blob ?? blobKeys.cutout(row.job_id, row.id),
    output: row.output_blob ?? blobKeys.output(row.job_id, row.id),
    thumb: row.thumb_blob ?? blobKeys.thumb(row.job_id, row.id),
  };
  if (row.model_cutout_blob) files.modelCutout = row.model_cutout_blob;
  return files;
}

/** The cut-out the model made for the photo's current result: what the check and reports judge. */
export function modelCutoutKey(row: Parameters<typeof resultFiles>[0]): string {
  const files = resultFiles(row);
  return files.modelCutout ?? files.cutout;
}
