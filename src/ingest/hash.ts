/** The identity of a file's bytes: their SHA-256 in hex. WebCrypto copies the bytes when asked, so the caller may change them at once. */
export async function hashBytes(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
