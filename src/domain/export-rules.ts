// When an export may send a stored output as it is: the product rule both the download and the render
// services apply, and the renderer's export follows.
import type { ImageFormat, Optimize } from './batch.schemas.ts';

/** Whether an export answers a stored output of this format and size as it is (nothing to convert). */
export function exportKeepsStored(
  storedFormat: ImageFormat,
  storedBytes: number,
  format: ImageFormat,
  optimize: Optimize,
  maxBytes?: number,
): boolean {
  const overLimit = maxBytes !== undefined && storedBytes > maxBytes;
  return format === storedFormat && (optimize === 'off' || (optimize === 'marketplace' && !overLimit));
}
