/** Stands in for fflate in the script-tag build, which never gzips (script-tag.ts). */
export function gzipSync(): never {
  throw new Error('the script-tag build does not gzip');
}
