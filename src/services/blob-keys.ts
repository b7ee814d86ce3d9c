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
};
