import { keysOf } from './keys';

/**
 * When each key was in a run's memory: one flag per revision. A memory is
 * read line by line, and a line's keys are worked out once however many
 * revisions repeat it, so thousands of revisions that mostly carry their notes
 * forward cost little more than their new lines.
 */
export class KeyTimeline {
  private readonly lineKeys = new Map<string, readonly string[]>();

  constructor(private readonly memories: readonly string[]) {}

  /** For each of `keys`, whether memory 0 … `last` holds it (index = revision). */
  presence(keys: ReadonlySet<string>, last: number): Map<string, Uint8Array> {
    const out = new Map<string, Uint8Array>();
    for (const k of keys) out.set(k, new Uint8Array(last + 1));
    for (let r = 0; r <= last; r++) {
      for (const line of (this.memories[r] ?? '').split('\n')) {
        for (const k of this.keysOfLine(line)) {
          const flags = out.get(k);
          if (flags) flags[r] = 1;
        }
      }
    }
    return out;
  }

  private keysOfLine(line: string): readonly string[] {
    let keys = this.lineKeys.get(line);
    if (!keys) this.lineKeys.set(line, (keys = keysOf(line)));
    return keys;
  }
}

/** A key's stays in the memory, latest first: the revision each began at, and whether it lasted to the memory traced. */
export interface Stay {
  from: number;
  /** True for the stay that reaches the last revision: the content was written down there and kept since. */
  kept: boolean;
}

/** The stays of a key whose flags are `flags` (see KeyTimeline.presence), latest first. */
export function staysOf(flags: Uint8Array): Stay[] {
  const out: Stay[] = [];
  const last = flags.length - 1;
  for (let r = last; r >= 0; r--) {
    if (!flags[r]) continue;
    const end = r;
    while (r > 0 && flags[r - 1]) r--;
    out.push({ from: r, kept: end === last });
  }
  return out;
}
