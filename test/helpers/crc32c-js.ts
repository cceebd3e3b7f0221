/**
 * Plain JavaScript CRC-32C (Castagnoli, slicing-by-8): the reference the tests check the native
 * `crc32c` against, and the baseline of the checksum benchmark.
 */
const POLY = 0x82f63b78; // reflected Castagnoli polynomial

/** Eight 256-entry tables for slicing-by-8: table k holds the CRC of a byte followed by k zero bytes. */
const TABLES: Uint32Array[] = (() => {
  const t: Uint32Array[] = [];
  const t0 = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[i] = c >>> 0;
  }
  t.push(t0);
  for (let k = 1; k < 8; k++) {
    const prev = t[k - 1]!;
    const cur = new Uint32Array(256);
    for (let i = 0; i < 256; i++) cur[i] = (prev[i]! >>> 8) ^ t0[prev[i]! & 0xff]!;
    t.push(cur);
  }
  return t;
})();

/** Plain JavaScript CRC-32C (slicing-by-8), same results as `crc32c`. */
export function crc32cJs(data: Uint8Array, initial = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES as [
    Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array,
  ];
  let crc = ~initial >>> 0;
  let i = 0;
  const n = data.length;
  const end8 = n - (n % 8);
  while (i < end8) {
    const a = (crc ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))) >>> 0;
    crc =
      t7[a & 0xff]! ^
      t6[(a >>> 8) & 0xff]! ^
      t5[(a >>> 16) & 0xff]! ^
      t4[a >>> 24]! ^
      t3[data[i + 4]!]! ^
      t2[data[i + 5]!]! ^
      t1[data[i + 6]!]! ^
      t0[data[i + 7]!]!;
    i += 8;
  }
  while (i < n) crc = t0[(crc ^ data[i++]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}
