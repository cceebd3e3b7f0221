import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/**
 * CRC-32C (Castagnoli), the checksum of record batches (magic 2). The native implementation
 * uses SSE4.2 / ARMv8 CRC instructions where present.
 */
export function crc32c(data: Buffer, initial = 0): number {
  return nativeCrc32c(data, initial);
}
