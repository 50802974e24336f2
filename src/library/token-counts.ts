import { nextTask } from '../core/tasks';
import type { Tokenizer } from '../core/tokenizer';
import type { Store } from '../storage/db';
import type { RunEvent } from '../agent/events';

/** Texts up to this many characters (about 250K tokens, a fraction of a second) are counted while they are imported. */
export const COUNT_AT_IMPORT_CHARS = 1_000_000;
/** Longest stretch a background count holds the worker before letting other work in. */
const SLICE_MS = 10;
/** Every engine counts in Qwen's tokens today; a count left unfinished resumes with this engine's tokenizer. */
const DEFAULT_COUNTING_ENGINE = 'extractive';
const SAMPLES = 16;
const SAMPLE_CHARS = 1_024;

/** Tokens in a long text, from evenly spread samples: within a few percent on prose, in milliseconds. */
export function estimateTokens(text: string, tokenizer: Tokenizer): number {
  let chars = 0;
  let tokens = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const start = Math.max(0, Math.floor(((text.length - SAMPLE_CHARS) * i) / (SAMPLES - 1)));
    const sample = text.slice(start, start + SAMPLE_CHARS);
    chars += sample.length;
    tokens += tokenizer.count(sample);
  }
  return Math.max(1, Math.round((text.length * tokens) / Math.max(1, chars)));
}

/** Every token of a text, telling `onProgress` (0 to 1) now and then. */
export function countTokens(text: string, tokenizer: Tokenizer, onProgress: (fraction: number) => void): number {
  let tokens = 0;
  let step = 0;
  for (const piece of tokenizer.pieces(text)) {
    tokens += piece.tokens;
    if (++step % 200_000 === 0) onProgress(piece.end / text.length);
  }
  return tokens;
}

/**
 * Exact counts of long books, made after they are stored: in slices that
 * leave the worker free for reading, then stored, and the pages told.
 */
export class TokenCounts {
  private readonly counting = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      store: Store;
      publish(event: RunEvent): void;
      tokenizerFor(engineId: string): Promise<Tokenizer>;
    },
  ) {}

  /** Counts one document; resolves once its count is stored. One count per document at a time. */
  count(documentId: string, text: string, tokenizer: Tokenizer): Promise<void> {
    let counting = this.counting.get(documentId);
    if (counting) return counting;
    counting = (async () => {
      let tokens = 0;
      let sliceStart = performance.now();
      for (const piece of tokenizer.pieces(text)) {
        tokens += piece.tokens;
        if (performance.now() - sliceStart > SLICE_MS) {
          await nextTask('background');
          sliceStart = performance.now();
        }
      }
      // A document deleted meanwhile stays deleted, and nobody is told.
      if (await this.deps.store.setDocumentTokens(documentId, tokens)) this.deps.publish({ type: 'document', documentId });
    })().finally(() => this.counting.delete(documentId));
    this.counting.set(documentId, counting);
    return counting;
  }

  /** Finishes the counts that a closed tab left unfinished. */
  async pending(): Promise<void> {
    const { store, tokenizerFor } = this.deps;
    for (const doc of await store.listDocuments()) {
      // A book still being stored is counted by the import that stores it.
      if (!doc.tokensEstimated || doc.importing) continue;
      const text = await store.getText(doc.id);
      if (text !== undefined) await this.count(doc.id, text, await tokenizerFor(DEFAULT_COUNTING_ENGINE));
    }
  }
}
