import { type DBSchema, openDB } from 'idb';
import { translateStorageError } from './errors';

/**
 * API keys for model servers, one per server origin, in a database of their
 * own: runs, exports and the main schema never hold them, and the worker reads
 * the key when it sends a request.
 */
export const SECRETS_DB = 'memagent-secrets';

interface SecretsDB extends DBSchema {
  apiKeys: { key: string; value: { origin: string; key: string } };
}

function open() {
  return openDB<SecretsDB>(SECRETS_DB, 1, {
    upgrade(db) {
      db.createObjectStore('apiKeys', { keyPath: 'origin' });
    },
  });
}

/** Runs `work` on the keys' database; a storage failure reaches the person in words (see errors.ts). */
async function withKeys<T>(what: { what: string; reading?: boolean }, work: (db: Awaited<ReturnType<typeof open>>) => Promise<T>): Promise<T> {
  try {
    const db = await open();
    try {
      return await work(db);
    } finally {
      db.close();
    }
  } catch (e) {
    throw translateStorageError(e, what);
  }
}

/** Keys belong to a server, whichever path of it the person typed. */
function originOf(baseUrl: string): string | null {
  try {
    return new URL(baseUrl.trim()).origin;
  } catch {
    return null;
  }
}

export async function loadApiKey(baseUrl: string): Promise<string | undefined> {
  const origin = originOf(baseUrl);
  if (!origin) return undefined;
  return withKeys({ what: 'the API key for this server', reading: true }, async (db) => (await db.get('apiKeys', origin))?.key);
}

/** Stores the key for the server at `baseUrl`; an empty key forgets it. */
export async function saveApiKey(baseUrl: string, key: string): Promise<void> {
  const origin = originOf(baseUrl);
  if (!origin) return;
  await withKeys({ what: 'the API key for this server' }, async (db) => {
    if (key.trim()) await db.put('apiKeys', { origin, key: key.trim() });
    else await db.delete('apiKeys', origin);
  });
}
