import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { StaleRunError } from '../src/storage/db';
import { connectionLost, StorageError, StorageFullError, translateStorageError } from '../src/storage/errors';
import { loadApiKey, saveApiKey } from '../src/storage/secrets';
import { QuotaFault } from './storage-faults';

const tx = (error: DOMException | null) => ({ error });

describe('storage failures in words', () => {
  // What Chromium and Firefox raise, word for word, and what the person reads instead.
  const cases: [string, unknown, Parameters<typeof translateStorageError>[1], StorageError['kind'], RegExp][] = [
    [
      'a write refused for lack of space',
      new DOMException('The quota has been exceeded.', 'QuotaExceededError'),
      { what: 'revision 3' },
      'full',
      /^This browser's storage for this site is full, so revision 3 could not be saved\. Free space/,
    ],
    [
      'a transaction aborted because a write did not fit',
      new DOMException('AbortError', 'AbortError'),
      { what: 'revision 3', tx: tx(new DOMException('Quota exceeded.', 'QuotaExceededError')) },
      'full',
      /storage for this site is full/,
    ],
    [
      "a value over the browser's limit for one value",
      new DOMException('The serialized keys and/or value are too large (size=206565940 bytes, max=133169152 bytes).', 'UnknownError'),
      { what: '"omnibus.txt"' },
      'too-large',
      /^"omnibus\.txt" is larger than this browser lets a site store in one piece, so it was not saved and nothing was changed\./,
    ],
    [
      'a connection the browser is closing',
      new DOMException("Failed to execute 'transaction' on 'IDBDatabase': The database connection is closing.", 'InvalidStateError'),
      { what: 'the run' },
      'closed',
      /^The browser closed this site's database .*, so the run could not be saved\. Reload the page/,
    ],
    [
      'a transaction aborted as the browser closes the connection',
      new DOMException('AbortError', 'AbortError'),
      { what: '"book.txt"', tx: tx(new DOMException('Connection is closing because of: Force close delete origin', 'UnknownError')) },
      'closed',
      /^The browser closed this site's database .*, so "book\.txt" could not be saved\./,
    ],
    [
      'a transaction the browser aborted with no error of its own',
      new DOMException('AbortError', 'AbortError'),
      { what: 'the run', tx: tx(null) },
      'closed',
      /^The browser closed this site's database/,
    ],
    [
      'a newer version of the app in another tab',
      new DOMException('The requested version (5) is less than the existing version (6).', 'VersionError'),
      { what: 'the book', reading: true },
      'newer-version',
      /newer version of the app, so the book could not be read\. Reload this page/,
    ],
    [
      'a value whose files are gone',
      new DOMException('Failed to read large IndexedDB value', 'NotReadableError'),
      { what: 'the text of this book', reading: true },
      'unreadable',
      /^The text of this book could not be read from this browser's storage: its files are missing or damaged\. Delete the book/,
    ],
    [
      'an internal failure',
      new DOMException('Internal error committing transaction.', 'UnknownError'),
      { what: 'revision 9' },
      'failed',
      /^This browser's database failed, so revision 9 could not be saved .* Reload the page and try again/,
    ],
  ];

  for (const [what, raw, failure, kind, message] of cases) {
    it(`says what to do about ${what}, and never the browser's own words`, () => {
      const translated = translateStorageError(raw, failure) as StorageError;
      expect(translated).toBeInstanceOf(StorageError);
      expect(translated.kind).toBe(kind);
      if (kind === 'full') expect(translated).toBeInstanceOf(StorageFullError);
      expect(translated.message).toMatch(message);
      expect(translated.message).not.toContain((raw as DOMException).message);
      expect(translated.message).not.toMatch(/IndexedDB|IDB|DOMException|transaction|serialized/);
    });
  }

  it("passes the app's own errors through as they are", () => {
    const stale = new StaleRunError('Revision 3 of run r is not the next one (4).');
    expect(translateStorageError(stale, { what: 'revision 3' })).toBe(stale);
    const plain = new Error('No run with id r.');
    expect(translateStorageError(plain, { what: 'the run' })).toBe(plain);
  });

  it('tells a page whose connection is gone what happened and what to do', () => {
    expect(connectionLost('browser').message).toMatch(/^The browser closed this site's database .* Reload the page/);
    expect(connectionLost('newer-version').message).toMatch(/newer version of the app.* Reload this page to update it\.$/);
  });

  it('tells in words why an API key could not be saved, and keeps the one saved before', async () => {
    const fault = await QuotaFault.install();
    try {
      await saveApiKey('http://127.0.0.1:9/v1', 'sk-first');
      fault.fill({ stores: ['apiKeys'], error: () => new DOMException('Internal error committing transaction.', 'UnknownError') });
      const failure = (await saveApiKey('http://127.0.0.1:9/v1', 'sk-second').catch((e: unknown) => e)) as StorageError;
      fault.free();
      expect(failure).toBeInstanceOf(StorageError);
      expect(failure.message).toMatch(/^This browser's database failed, so the API key for this server could not be saved .* Reload the page/);
      expect(failure.message).not.toMatch(/Internal error|transaction/);
      expect(await loadApiKey('http://127.0.0.1:9/other')).toBe('sk-first');
    } finally {
      fault.uninstall();
    }
  });
});
