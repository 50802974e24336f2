import { type ChunkSpan, chunkText } from './chunker';
import { nextTask } from './tasks';
import type { Tokenizer } from './tokenizer';

/** Where the loop finds its chunks: a list, or a feed that is still cutting the book. */
export interface ChunkSource {
  /** The chunk at `index`, waiting for it if it is not cut yet; undefined past the last. */
  at(index: number): Promise<ChunkSpan | undefined>;
}

/** What a ChunkFeed cuts, and how. */
export interface ChunkFeedOptions {
  text: string;
  tokenizer: Tokenizer;
  maxTokens: number;
  /** Chunks already known (e.g. stored before a reload): the list the feed extends in place. */
  spans: ChunkSpan[];
  onProgress?(spans: readonly ChunkSpan[], done: boolean): void;
  /** How long one slice of cutting runs before the reader gets a turn (8 ms by default). */
  sliceMs?: number;
  /** The least time between two reports of progress (250 ms by default). */
  reportMs?: number;
}

/**
 * Cuts a book into chunks in the background, in slices of a few milliseconds,
 * so that reading starts with the first chunk while the rest is still being
 * tokenized. `spans` (chunks already known, e.g. stored before a reload) is
 * extended in place; `onProgress` hears of the chunks cut so far at most every
 * `reportMs` (a listener that stores them writes a few times a second, not at
 * every slice) and once at the end.
 */
export class ChunkFeed implements ChunkSource {
  readonly spans: ChunkSpan[];
  private done = false;
  private failed: unknown = null;
  private waiters: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly options: ChunkFeedOptions) {
    this.spans = options.spans;
    void this.run();
  }

  get complete(): boolean {
    return this.done;
  }

  /** Stops cutting (the run paused or ended). */
  stop(): void {
    this.stopped = true;
    this.wake();
  }

  async at(index: number): Promise<ChunkSpan | undefined> {
    while (index >= this.spans.length && !this.done && !this.stopped) {
      if (this.failed) throw this.failed;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    if (this.failed) throw this.failed;
    return this.spans[index];
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private async run(): Promise<void> {
    try {
      const { text, tokenizer, maxTokens, onProgress = () => undefined, sliceMs = 8, reportMs = 250 } = this.options;
      // Chunks known from before continue where they ended: cutting restarts cleanly at a chunk boundary.
      const from = this.spans.at(-1)?.end ?? 0;
      const chunks = chunkText(text, tokenizer, maxTokens, from);
      let sliceStart = performance.now();
      let reportedAt = sliceStart;
      let reported = this.spans.length;
      for (const span of chunks) {
        if (this.stopped) return;
        this.spans.push(span);
        this.wake();
        if (performance.now() - sliceStart > sliceMs) {
          if (this.spans.length > reported && performance.now() - reportedAt >= reportMs) {
            onProgress(this.spans, false);
            reported = this.spans.length;
            reportedAt = performance.now();
          }
          await nextTask(); // let the reader and its messages run
          sliceStart = performance.now();
        }
      }
      this.done = true;
      onProgress(this.spans, true);
    } catch (e) {
      this.failed = e;
    } finally {
      this.wake();
    }
  }
}
