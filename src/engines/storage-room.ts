/** What a browser's StorageManager may offer; WebKitGTK by default has no `navigator.storage` at all. */
export interface StorageLike {
  estimate?: () => Promise<{ usage?: number; quota?: number }>;
}

/**
 * Bytes this site uses and may use, or nothing where the browser does not say: a missing
 * `navigator.storage` or `estimate`, one that throws, or one that rejects all mean "unknown", never an error.
 */
export async function estimateStorage(storage: StorageLike | undefined = globalThis.navigator?.storage): Promise<{ usage?: number; quota?: number }> {
  if (typeof storage?.estimate !== 'function') return {};
  try {
    const { usage, quota } = await storage.estimate();
    return { ...(usage !== undefined && { usage }), ...(quota !== undefined && { quota }) };
  } catch {
    return {};
  }
}
