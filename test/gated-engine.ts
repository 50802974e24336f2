import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import type { QwenTokenizer } from '../src/engines/qwen-tokenizer';

/**
 * The extractive engine behind a gate: generation call number `holdAt` waits until
 * released, so that a test can pause a run in the middle of a step.
 */
export class GatedEngine implements Engine {
  readonly id = 'extractive';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  readonly tokenizer: QwenTokenizer;
  calls = 0;
  holdAt = -1;
  private release: () => void = () => undefined;
  private reachedHold: () => void = () => undefined;
  /** Resolves when the held call has started. */
  readonly held = new Promise<void>((resolve) => (this.reachedHold = resolve));
  /** Resolves when the held call has finished, however it ended. */
  settled: Promise<unknown> = new Promise(() => undefined);

  constructor(tokenizer: QwenTokenizer) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
    this.tokenizer = tokenizer;
  }

  open(): void {
    this.release();
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    if (this.calls++ !== this.holdAt) return this.inner.generate(messages, options);
    const gate = new Promise<void>((resolve) => (this.release = resolve));
    this.reachedHold();
    const result = gate.then(() => this.inner.generate(messages, options));
    this.settled = result.catch((e: unknown) => e);
    return result;
  }
}
