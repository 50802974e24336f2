/**
 * A pinned file's bytes from its address, or an error that names the address
 * and why it could not be had: the network's reason or the HTTP status. The
 * caller's own error class carries the message, so each file kind keeps its
 * advice.
 */
export async function fetchBytes(url: string, request: { fetch: typeof fetch; init: RequestInit }, fail: (message: string) => Error): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await request.fetch(url, request.init);
  } catch (e) {
    // Node's fetch hides the network's reason one level down.
    const cause = e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
    throw fail(`${url} could not be fetched (${cause}).`);
  }
  if (!response.ok) throw fail(`${url} could not be fetched (HTTP ${response.status}).`);
  return new Uint8Array(await response.arrayBuffer());
}
