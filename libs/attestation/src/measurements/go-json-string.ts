/**
 * Go's encoding/json string escaping. It differs from `JSON.stringify` in that `<`, `>` and `&`
 * are written as `\u003c`, `\u003e`, `\u0026` and U+2028/U+2029 are escaped too; byte-exact
 * re-encoding of Go-written files (URLs in configs, names in image measurements) needs this.
 * (Lives here because measurements is the lowest layer that writes Go JSON strings; it would
 * belong in `go-json.ts`.)
 */
export function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
