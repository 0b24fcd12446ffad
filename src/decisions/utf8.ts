// UTF-8 sizes, for values that Temporal and the API server limit in bytes (no TextEncoder in
// workflow code). Pure.

/** The bytes one code point takes in UTF-8. */
export function codePointBytes(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/** The bytes a string takes in UTF-8. */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (const ch of s) n += codePointBytes(ch.codePointAt(0)!);
  return n;
}
