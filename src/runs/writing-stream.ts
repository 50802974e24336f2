/**
 * The memory being written, passed on at most ten times a second: enough to
 * watch a step progress, few enough messages for any number of tabs. Once
 * `signal` stops the step, nothing more of its text goes out.
 */
export class WritingStream {
  private text = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastSent = 0;

  constructor(
    private readonly send: (text: string) => void,
    private readonly signal?: AbortSignal,
  ) {}

  add(delta: string): void {
    if (this.signal?.aborted) return this.reset();
    this.text += delta;
    if (this.timer) return;
    // Text goes out at once when none went out in the last 100 ms (so a step's first text does, mostly); else then.
    const wait = this.lastSent + 100 - performance.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  reset(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.text = '';
  }

  private flush(): void {
    this.timer = undefined;
    if (this.signal?.aborted) return this.reset();
    this.lastSent = performance.now();
    this.send(this.text);
  }
}
