import { formatByName, hashBytes, type IngestOptions, ingestBytes, sizeRefusal } from '../ingest/ingest';
import type { Tokenizer } from '../core/tokenizer';
import type { DocumentRecord, Store, StoreTextOptions } from '../storage/db';
import type { RunEvent } from '../agent/events';
import { mark } from '../jobs/marks';
import { RequestError } from '../jobs/request-error';
import { COUNT_AT_IMPORT_CHARS, countTokens, estimateTokens, TokenCounts } from './token-counts';
import { NotStreamable, STREAM_BYTES, streamTextFile } from './stream-import';
import type { IngestRequest } from '../agent/protocol';
import { checkRoom, importError } from './import-errors';
import { ImportHolds } from './import-holds';
import { throttle } from './progress';

export interface LibraryDeps {
  store: Store;
  tokenizerFor(engineId: string): Promise<Tokenizer>;
  /**
   * The SHA-256 of a copy of `bytes`, made on another thread so that the bytes
   * can be read meanwhile; undefined where that is not done (no such thread,
   * or a file too large to hold twice).
   */
  hashBeside?(bytes: Uint8Array<ArrayBuffer> | Blob): Promise<string> | undefined;
  /** Tells every tab that a document's record changed. */
  publish(event: RunEvent): void;
  /** Runs `work` holding lock `name`, waiting for it if another tab holds it. */
  withLock?(name: string, work: () => Promise<void>): Promise<void>;
  /** Runs `work` holding the lock if nobody holds it; false (and `work` not run) if someone does. */
  tryLock?(name: string, work: () => Promise<void>): Promise<boolean>;
  /** Texts longer than this (characters) are stored with an estimated count and counted afterwards; COUNT_AT_IMPORT_CHARS by default. */
  countAtImportChars?: number;
  /** Bytes this site uses and may use (navigator.storage.estimate), to refuse a book that cannot fit. */
  estimateStorage?(): Promise<{ usage?: number; quota?: number }>;
  /** Sizes of the text files read as a stream (STREAM_BYTES by default). */
  streamBytes?: { min: number; max: number };
  /** How texts are cut into parts and written (the Store's defaults otherwise). */
  textStorage?: Pick<StoreTextOptions, 'partChars' | 'batchChars'>;
}

/** A book whose text is still being read from its file. */
export interface ArrivingText {
  /** The book's text from its beginning, as far as it was decoded when the book became readable. */
  start: string;
  /** The whole text once decoded; undefined if the import failed. */
  whole: Promise<string | undefined>;
}

/**
 * The books: imports them (any format, counted and stored in parts, usable
 * before the whole text is written), keeps the text most recently used at
 * hand, finishes counts left unfinished, and deletes a book with its runs.
 */
export class Library {
  /** The text most recently imported or read: one book, held while it is likely to be read. */
  private lastText: { id: string; text: string } | null = null;
  /** Imports whose text is being written, by document id: they end with the whole text stored. */
  private readonly imports = new Map<string, Promise<DocumentRecord>>();
  /** Exact token counts of long books, made after they are stored. */
  readonly counts: TokenCounts;
  /** Books whose text is still being read from their file: the beginning of it, and the whole once decoded. */
  private readonly arrivingTexts = new Map<string, ArrivingText>();
  /** Reads starting (see holdImports), and the streamed imports waiting for them. */
  private readonly holds = new ImportHolds();
  /** Told before a document is deleted: its readers stop first. */
  private readonly deleting = new Set<(documentId: string) => Promise<void>>();

  constructor(private readonly deps: LibraryDeps) {
    this.counts = new TokenCounts(deps);
  }

  /** `listener` runs before each document is deleted (its runs stop reading it). */
  onDelete(listener: (documentId: string) => Promise<void>): void {
    this.deleting.add(listener);
  }

  /**
   * A file → a stored document: read (any format), counted in the engine's
   * tokens and stored with its structure, or refused with a message. The same
   * bytes added again return the stored document without reading them again.
   */
  ingest(name: string, bytes: Uint8Array<ArrayBuffer>, engineId: string, request: IngestRequest = {}): Promise<DocumentRecord> {
    return this.ingestOwned(name, { bytes }, engineId, request);
  }

  /**
   * Reads the bytes the holder owns and lets go of them once they are text, so
   * that a large book is held as bytes and text together only while it is
   * decoded, not while it is counted and stored.
   */
  private async ingestOwned(
    name: string,
    holder: { bytes: Uint8Array<ArrayBuffer> | null },
    engineId: string,
    request: IngestRequest,
  ): Promise<DocumentRecord> {
    const { store } = this.deps;
    const report = throttle(request.onProgress);
    // Where the bytes can be hashed elsewhere, they are read meanwhile, and a file stored before is
    // known once both are done; otherwise the hash comes first and such a file is not read at all.
    mark('import-bytes');
    const beside = this.deps.hashBeside?.(holder.bytes!);
    const hash = beside ?? (await hashBytes(holder.bytes!));
    if (!beside) {
      const existing = await this.settledDocument(hash as string, request);
      if (existing) return existing;
    }
    // How much room the browser grants is asked while the file is read.
    // A missing API may throw at once rather than reject: either way the room is unknown, never the import's error.
    const room = (async () => this.deps.estimateStorage?.())().catch(() => undefined);
    const options: IngestOptions = {
      hash,
      stripGutenberg: request.stripGutenberg ?? true,
      // The bytes are this import's own: reading may rewrite them (see IngestOptions.consumeBytes).
      consumeBytes: true,
      onProgress: (p) => report({ stage: p.stage, fraction: 0.5 * p.fraction }),
    };
    const reading = ingestBytes(name, holder.bytes!, options);
    // A file that cannot be read fails here before the hash is back; that failure is this import's answer, awaited
    // below (or moot when the hash finds the book stored), so it is marked handled now, not reported as uncaught.
    reading.catch(() => undefined);
    holder.bytes = null;
    if (beside) {
      const sum = await beside;
      mark('import-hashed');
      const existing = await this.settledDocument(sum, request);
      if (existing) return existing;
    }
    const [doc, tokenizer] = await Promise.all([reading, this.deps.tokenizerFor(engineId)]);
    mark('import-read');
    checkRoom(name, 2 * (doc.text.length + (doc.stripped ? doc.stripped.header.length + doc.stripped.footer.length : 0)), await room);
    // A long book is stored with an estimate and counted afterwards: reading can start at once.
    const exact = doc.text.length <= (this.deps.countAtImportChars ?? COUNT_AT_IMPORT_CHARS);
    const tokens = exact
      ? countTokens(doc.text, tokenizer, (f) => report({ stage: 'Counting tokens', fraction: 0.5 + 0.4 * f }))
      : estimateTokens(doc.text, tokenizer);
    const storedFrom = exact ? 0.9 : 0.5;
    mark('import-counted');
    report({ stage: 'Storing', fraction: storedFrom });
    const record: Omit<DocumentRecord, 'partChars' | 'importing'> = {
      id: doc.hash,
      name: doc.name,
      bytes: doc.bytes,
      encoding: doc.encoding,
      chars: doc.text.length,
      tokens,
      ...(exact ? {} : { tokensEstimated: true as const }),
      addedAt: Date.now(),
      format: doc.format,
      anchors: doc.anchors,
    };
    if (doc.pages !== undefined) record.pages = doc.pages;
    if (doc.title) record.title = doc.title;
    if (doc.stripped) record.stripped = { header: doc.stripped.header.length, footer: doc.stripped.footer.length };
    let usable: DocumentRecord | null = null;
    // One tab stores a book at a time: the same file added in two tabs at once is stored once.
    const storing = this.holding(`memagent-import-${doc.hash}`, () =>
      store.storeDocument(record, doc.text, doc.stripped, {
        ...this.deps.textStorage,
        onUsable: (d) => {
          mark('import-usable');
          usable = d;
          this.lastText = { id: d.id, text: doc.text };
          request.onUsable?.(d);
        },
        onProgress: (f) => report({ stage: 'Storing', fraction: storedFrom + (1 - storedFrom) * f }),
      }),
    );
    this.imports.set(doc.hash, storing);
    let stored: DocumentRecord;
    try {
      stored = await storing;
    } catch (e) {
      throw await this.importFailed(name, doc.hash, usable !== null, e);
    } finally {
      this.imports.delete(doc.hash);
    }
    report({ stage: 'Done', fraction: 1 });
    if (!usable)
      request.onUsable?.(stored); // stored before by another tab: usable as it is
    // Every tab: a book that was usable with part of its text stored is whole now.
    else if ((usable as DocumentRecord).importing) this.deps.publish({ type: 'document', documentId: stored.id });
    // A count that fails (the tab closing) leaves the estimate; the next start of the worker counts again.
    if (stored.tokensEstimated && usable) void this.counts.count(stored.id, doc.text, tokenizer).catch(() => undefined);
    return stored;
  }

  /** Runs `work` holding lock `name` where there are locks (one tab imports a book at a time). */
  private async holding<T>(name: string, work: () => Promise<T>): Promise<T> {
    if (!this.deps.withLock) return work();
    let out: { value: T } | undefined;
    await this.deps.withLock(name, async () => {
      out = { value: await work() };
    });
    return out!.value;
  }

  /**
   * A document already stored under this hash, once its import is over: a
   * finished one at once, one still being imported (here or in another tab)
   * when that import ends. An import that was cut short is removed, and
   * undefined returned: the file is imported afresh.
   */
  private async settledDocument(hash: string, request: IngestRequest): Promise<DocumentRecord | undefined> {
    const { store } = this.deps;
    let existing = (await store.getDocument(hash)) ?? (await store.listDocuments()).find((d) => d.sha256 === hash);
    if (existing?.importing) {
      const here = this.imports.get(hash);
      if (here) {
        request.onUsable?.(existing);
        return here;
      }
      // Another tab may be importing it: wait for that import to end, then look again.
      await this.holding(`memagent-import-${hash}`, async () => undefined);
      existing = await store.getDocument(hash);
      if (existing?.importing) {
        await this.deleteDocument(hash);
        existing = undefined;
      }
    }
    if (!existing) return undefined;
    // A count that fails leaves the estimate; the next start of the worker counts again.
    if (existing.tokensEstimated) void this.counts.pending().catch(() => undefined);
    request.onUsable?.(existing);
    return existing;
  }

  /**
   * An import that failed while storing: what it wrote is removed (with any
   * run started on it meanwhile), and the error says so in words.
   */
  private async importFailed(name: string, id: string, wasUsable: boolean, e: unknown): Promise<unknown> {
    let kept = '';
    if (wasUsable) {
      const removed = await this.deleteDocument(id).catch(() => null);
      this.deps.publish({ type: 'document', documentId: id });
      const runs = removed?.runs ?? 0;
      kept = removed
        ? ` Nothing of it was kept${runs ? `, and the read${runs > 1 ? 's' : ''} started on it ${runs > 1 ? 'were' : 'was'} removed` : ''}.`
        : // The database is out of reach (closed by the browser): the next start of the app removes it.
          ' What was stored of it is removed the next time the app opens.';
    }
    return importError(name, e, kept);
  }

  /**
   * Removes what imports cut short left behind (a tab closed or crashed while
   * a book was being stored): such a book is deleted with any run started on
   * it, so that no book is ever left with part of its text. An import still
   * going on in another tab holds its lock and is left alone.
   */
  async recoverImports(): Promise<number> {
    let removed = 0;
    for (const doc of await this.deps.store.listDocuments()) {
      if (!doc.importing || this.imports.has(doc.id)) continue;
      const free = this.deps.tryLock
        ? await this.deps.tryLock(`memagent-import-${doc.id}`, async () => {
            await this.deleteDocument(doc.id);
          })
        : (await this.deleteDocument(doc.id), true);
      if (!free) continue;
      removed++;
      this.deps.publish({ type: 'document', documentId: doc.id });
    }
    return removed;
  }

  /**
   * A document's text: the one just imported or read is kept here, so that a
   * read started right after an import does not wait to load a long book again.
   */
  async text(documentId: string): Promise<string | undefined> {
    const arriving = this.arrivingTexts.get(documentId);
    if (arriving) return arriving.whole;
    if (this.lastText?.id === documentId) return this.lastText.text;
    const text = await this.deps.store.readText(documentId);
    if (text !== undefined) this.lastText = { id: documentId, text };
    return text;
  }

  /**
   * The whole text of a stored book, to read it. A book still being imported
   * elsewhere is not whole yet: if that import was cut short, the book is
   * removed (and undefined returned); if it is still going on, the person is
   * asked to wait for it.
   */
  async bookText(doc: DocumentRecord): Promise<string | undefined> {
    const text = await this.text(doc.id);
    if (text !== undefined || !doc.importing) return text;
    if (await this.recoverImports()) return undefined;
    throw new RequestError(`"${doc.name}" is still being stored by another tab. Wait until its import has finished, then try again.`);
  }

  /**
   * Holds back imports that read a file as a stream (between its slices) until
   * `release` is called, or `ms` have passed: a read that is starting goes
   * first, and the import goes on once the read's first step has begun.
   */
  holdImports(ms = 5000): () => void {
    return this.holds.hold(ms);
  }

  /** The beginning of a book whose text is still being read from its file, and the whole once decoded (undefined if the import fails). */
  arriving(documentId: string): ArrivingText | undefined {
    return this.arrivingTexts.get(documentId);
  }

  /** A picked file: a file too large is refused before its bytes are read into memory. */
  async ingestFile(file: Blob & { name: string }, engineId: string, request: IngestRequest = {}): Promise<DocumentRecord> {
    const refusal = sizeRefusal(file.name, file.size);
    if (refusal) throw refusal;
    mark('import-file', true);
    request.onProgress?.({ stage: 'Reading the file', fraction: 0 });
    const { min, max } = this.deps.streamBytes ?? STREAM_BYTES;
    const named = formatByName(file.name);
    if (file.size >= min && file.size <= max && (named === 'text' || named === 'markdown')) {
      const streamed = await this.ingestStream(file, engineId, request);
      if (streamed) return streamed;
    }
    return this.ingestOwned(file.name, { bytes: new Uint8Array(await file.arrayBuffer()) }, engineId, request);
  }

  /**
   * A text file read as a stream (see streamTextFile): readable once its first
   * part is stored, long before the file is read to its end. Undefined, with
   * nothing stored, where the file is to be read whole instead: another
   * encoding, or a book of the same size stored before (it may be this file
   * again, which only its hash tells, and that takes the whole file).
   */
  private async ingestStream(file: Blob & { name: string }, engineId: string, request: IngestRequest): Promise<DocumentRecord | undefined> {
    const { store } = this.deps;
    // One tab streams a file of a given size at a time: the same file in two tabs is stored once.
    return this.holding(`memagent-import-bytes-${file.size}`, async () => {
      if ((await store.listDocuments()).some((d) => d.bytes === file.size)) return undefined;
      const id = `text-${crypto.randomUUID()}`;
      const report = throttle(request.onProgress);
      const tokenizer = await this.deps.tokenizerFor(engineId);
      let settle: (text: string | undefined) => void = () => undefined;
      let usable: DocumentRecord | null = null;
      const storing = this.holding(`memagent-import-${id}`, () =>
        streamTextFile(store, {
          id,
          file,
          tokenizer,
          stripGutenberg: request.stripGutenberg ?? true,
          turn: () => this.holds.turn(),
          sha256: async () => this.deps.hashBeside?.(file) ?? hashBytes(new Uint8Array(await file.arrayBuffer())),
          ...(this.deps.textStorage?.partChars ? { partChars: this.deps.textStorage.partChars } : {}),
          onUsable: (doc, start) => {
            mark('import-usable');
            usable = doc;
            this.arrivingTexts.set(id, { start, whole: new Promise((resolve) => (settle = resolve)) });
            request.onUsable?.(doc);
          },
          onProgress: (f) => report({ stage: 'Storing', fraction: f }),
        }),
      );
      const done = storing.then((r) => r.doc);
      done.catch(() => undefined); // the failure is thrown below
      this.imports.set(id, done);
      try {
        const { doc, text } = await storing;
        this.lastText = { id, text };
        settle(text);
        report({ stage: 'Done', fraction: 1 });
        this.deps.publish({ type: 'document', documentId: id });
        // A count that fails leaves the estimate; the next start of the worker counts again.
        void this.counts.count(id, text, tokenizer).catch(() => undefined);
        return doc;
      } catch (e) {
        settle(undefined);
        if (!(e instanceof NotStreamable)) throw await this.importFailed(file.name, id, usable !== null, e);
        // Read whole instead; a run started on what was read so far goes with it.
        if (usable) {
          await this.deleteDocument(id);
          this.deps.publish({ type: 'document', documentId: id });
        }
        return undefined;
      } finally {
        this.arrivingTexts.delete(id);
        this.imports.delete(id);
      }
    });
  }

  /** Deletes a document with its runs, revisions and memories; runs still reading are stopped first. */
  async deleteDocument(id: string): Promise<{ runs: number }> {
    if (this.lastText?.id === id) this.lastText = null;
    for (const listener of this.deleting) await listener(id);
    return this.deps.store.deleteDocument(id);
  }
}
