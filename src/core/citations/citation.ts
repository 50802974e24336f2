/*
 * What a trace through a run's memory takes (the question, the memories, the
 * sections read) and what it gives: citations of the book's sentences, and
 * what has no source in it.
 */
import { NO_ANSWER_REPLY } from '../prompts';
import type { Note } from './notes';

/** The section a revision read: its text, and where it starts in the run's text (the book, or a set's joined text). */
export interface SectionText {
  text: string;
  start: number;
  /** Passages of the book read with the section (an InfMem step's retrieved passages): their sentences are sources too. */
  passages?: readonly { text: string; start: number }[];
}

export interface TraceInput {
  question: string;
  /** The memory after each revision, in order. */
  memories: readonly string[];
  /** The section revision `r` read (as the worker reads it from storage, later); undefined where it cannot be read (a book not stored here). */
  section(revision: number): SectionText | undefined | Promise<SectionText | undefined>;
}

/** A sentence of the book, by its place in the run's text. */
export interface CitedSentence {
  start: number;
  end: number;
  text: string;
}

export interface Citation {
  /** The revision that wrote the content down: its section holds the sentence. */
  revision: number;
  /** The last revision of the memory traced; the content was kept from `revision` to here (see `returned`). */
  keptUntil: number;
  /** The sentence it was drawn from; absent where the section could not be read. */
  sentence?: CitedSentence;
  /** True where the content left the memory after `revision` and came back later without a section that holds it. */
  returned?: boolean;
  /** The memory's notes it supports. */
  notes: string[];
}

/** Something with no source in the book: a note of the memory no section supports, or a part of an answer the memory does not hold. */
export interface Unsourced {
  text: string;
  /** "memory": the memory holds it, no section does; "answer": the answer says it, the memory does not. */
  reason: 'memory' | 'answer';
}

export interface Sources {
  citations: Citation[];
  unsourced: Unsourced[];
}

/** A note of a memory with where it came from (no citation: no source found in the book). */
export interface NoteTrace {
  note: Note;
  citations: Citation[];
}

/** One citation per sentence (or, without the book, per revision), with every note it supports; in the order of the book. */
export function merge(citations: readonly Citation[]): Citation[] {
  const byPlace = new Map<string, Citation>();
  for (const c of citations) {
    const key = `${c.revision}:${c.sentence?.start ?? ''}`;
    const seen = byPlace.get(key);
    if (!seen) byPlace.set(key, { ...c, notes: [...c.notes] });
    else for (const n of c.notes) if (!seen.notes.includes(n)) seen.notes.push(n);
  }
  return [...byPlace.values()].sort((a, b) => (a.sentence?.start ?? -1) - (b.sentence?.start ?? -1) || a.revision - b.revision);
}

/**
 * Whether a reply answers nothing: empty, or the reply that says the memory holds no answer. It claims nothing
 * from the book, so it has no sources, and is never listed as a claim of its own without one.
 */
export function isNoAnswer(text: string): boolean {
  const t = text.trim();
  return t === '' || t === NO_ANSWER_REPLY;
}
