import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import type { QwenTokenizer } from '../src/engines/qwen-tokenizer';

/**
 * The extractive engine behind a gate: generation call number `holdAt` (or the
 * first call `holdIf` accepts) waits until released, so that a test can pause a
 * run in the middle of a step.
 */
export class GatedEngine implements Engine {
  readonly id = 'extractive';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  readonly tokenizer: QwenTokenizer;
  calls = 0;
  holdAt = -1;
  /** Chooses the held call by its messages instead (asked until it accepts one). */
  holdIf: ((messages: readonly ChatMessage[]) => boolean) | undefined;
  private release: () => void = () => undefined;
  private reachedHold: () => void = () => undefined;
  /** Resolves when the held call has started. */
  readonly held = new Promise<void>((resolve) => (this.reachedHold = resolve));
  /** Resolves when the held call has finished, however it ended. */
  settled: Promise<unknown> = new Promise(() => undefined);
  /** The held call's stop signal: a test waits on it to open the gate only once the reader was told to stop. */
  heldSignal: AbortSignal | undefined;

  constructor(tokenizer: QwenTokenizer) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
    this.tokenizer = tokenizer;
  }

  open(): void {
    this.release();
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const hold = this.holdIf ? this.holdIf(messages) : this.calls === this.holdAt;
    this.calls++;
    if (!hold) return this.inner.generate(messages, options);
    this.holdIf = undefined;
    const gate = new Promise<void>((resolve) => (this.release = resolve));
    this.heldSignal = options.signal;
    this.reachedHold();
    const result = gate.then(() => this.inner.generate(messages, options));
    this.settled = result.catch((e: unknown) => e);
    return result;
  }
}
