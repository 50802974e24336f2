import { diffWords } from 'diff';

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

/** Word-level difference between two memories: what an update kept, dropped and added. */
export function diffMemory(before: string, after: string): MemoryDiff {
  const parts: DiffPart[] = diffWords(before, after).map((c) => ({
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
