/** Generated cuts of a byte stream, as a socket or a terminal could hand it over. */

/** `bytes` cut at `cuts` (any numbers, taken modulo its length plus one, in any order) into the reads, in order. */
export const cutAt = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  return [...points, bytes.length].map((end, index, ends) => bytes.subarray(index === 0 ? 0 : ends[index - 1], end))
}
