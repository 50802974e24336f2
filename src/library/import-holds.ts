/**
 * Imports held back for reads that are starting: a file read as a stream
 * waits between its slices while a hold lasts, so a read's first step goes
 * first, and goes on once the last hold is released or times out.
 */
export class ImportHolds {
  private holds = 0;
  private readonly waiting: (() => void)[] = [];

  /** Holds imports until `release` is called, or `ms` have passed. */
  hold(ms: number): () => void {
    this.holds++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      if (--this.holds === 0) for (const resume of this.waiting.splice(0)) resume();
    };
    const timer = setTimeout(release, ms);
    return release;
  }

  /** Resolves once no hold is left: an import's turn to go on. */
  async turn(): Promise<void> {
    while (this.holds > 0) await new Promise<void>((resume) => this.waiting.push(resume));
  }
}
