import { INITIAL_MEMORY } from '../../core/prompts';
import { sentenceSpans } from '../../core/text';
import type { Tokenizer } from '../../core/tokenizer';
import { type Candidate, rank } from './answer-sentences';

/** How much a memory may hold: its size in tokens, counted by the engine's tokenizer. */
export interface MemoryCap {
  tokenizer: Pick<Tokenizer, 'count'>;
  maxTokens: number;
}

/** The memory without its placeholder: the first step's memory holds no sentence. */
export function withoutInitial(memory: string): string {
  return memory.trim() === INITIAL_MEMORY ? '' : memory;
}

export function sentencesOf(text: string): string[] {
  return sentenceSpans(text).map((s) => text.slice(s.start, s.end).replace(/\s+/g, ' '));
}

/** The engine writes one sentence a line; other memories are split into sentences. */
export function memorySentences(memory: string): string[] {
  return memory.split('\n').flatMap(sentencesOf);
}

/**
 * One step's new memory: the sentences of the memory, then of each text in `read` order, ranked by
 * IDF-weighted overlap with the question and kept, best first, while they fit the cap; written back one a
 * line in reading order. With nothing that matches, the previous memory stands.
 */
export function rewriteMemory(question: string, memory: string, read: readonly string[], cap: MemoryCap): string {
  const previous = withoutInitial(memory);
  const { pool } = rank(question, [...memorySentences(previous), ...read.flatMap(sentencesOf)]);
  const kept: Candidate[] = [];
  let used = 0;
  for (const c of [...pool].sort((a, b) => b.score - a.score || a.order - b.order)) {
    if (c.score <= 0) break;
    const cost = cap.tokenizer.count(c.text) + 1; // +1 for the line break
    if (used + cost > cap.maxTokens) continue;
    kept.push(c);
    used += cost;
  }
  if (kept.length === 0) return previous.trim() || INITIAL_MEMORY;
  return kept
    .sort((a, b) => a.order - b.order)
    .map((c) => c.text)
    .join('\n');
}

/** What InfMem's writer step is given: the memory so far, the passages retrieved for this chunk, and the chunk. */
export interface InfmemWrite {
  question: string;
  memory: string;
  /** The retrieved passages' texts, in rank order (without their `[Retrieved #k]` labels). */
  passages: readonly string[];
  chunk: string;
}

/** InfMem's writer step by the MemAgent step's rule: the retrieved passages are read before the chunk. */
export function writeInfmemMemory(step: InfmemWrite, cap: MemoryCap): string {
  return rewriteMemory(step.question, step.memory, [...step.passages, step.chunk], cap);
}
