import { type ChangeObject, diffLines, diffWords } from 'diff';

export interface DiffPart {
  text: string;
  kind: 'same' | 'added' | 'removed';
}

export interface MemoryDiff {
  parts: DiffPart[];
  wordsAdded: number;
  wordsRemoved: number;
}

function words(s: string): number {
  return s.split(/\s+/).filter(Boolean).length;
}

// Word diffs cost time by the number of edits: a memory rewritten from scratch
// would take a tenth of a second. Past this many edits, whole lines are compared.
const MAX_WORD_EDITS = 200;

/**
 * Word-level difference between two memories: what an update kept, dropped and
 * added. A near-total rewrite is diffed by lines instead, which is as telling and
 * stays fast.
 */
export function diffMemory(before: string, after: string): MemoryDiff {
  const changes: ChangeObject<string>[] = diffWords(before, after, { maxEditLength: MAX_WORD_EDITS }) ?? diffLines(before, after);
  const parts: DiffPart[] = changes.map((c) => ({
    text: c.value,
    kind: c.added ? 'added' : c.removed ? 'removed' : 'same',
  }));
  let wordsAdded = 0;
  let wordsRemoved = 0;
  for (const p of parts) {
    if (p.kind === 'added') wordsAdded += words(p.text);
    else if (p.kind === 'removed') wordsRemoved += words(p.text);
  }
  return { parts, wordsAdded, wordsRemoved };
}
