/**
 * The memory being written, passed on at most ten times a second: enough to
 * watch a step progress, few enough messages for any number of tabs.
 */
export class WritingStream {
  private text = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastSent = 0;

  constructor(private readonly send: (text: string) => void) {}

  add(delta: string): void {
    this.text += delta;
    // The first text of a step goes out at once; after that at most every 100 ms.
    this.timer ??= setTimeout(
      () => {
        this.timer = undefined;
        this.lastSent = performance.now();
        this.send(this.text);
      },
      Math.max(0, this.lastSent + 100 - performance.now()),
    );
  }

  reset(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.text = '';
  }
}
