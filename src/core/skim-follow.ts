import type { PlannedChunk } from './read-reason';
import { entityTerms, nameMentions, type SkimIndex, type SkimOptions, skimTerms, STOP } from './skim';

/**
 * Following the memory during a skim. After each revision, every name or key
 * the memory newly holds (not in the question, nor in an earlier memory) is
 * looked up on its own: the chunks further on that hold it join the plan, a
 * few per name, the most specific names first. A name that many chunks hold
 * points nowhere in particular and is not followed. Names the memory writes
 * next to the question's own names, or next to a name already followed, go
 * first; other names may use only half of the budget, so a memory full of
 * incidental names cannot turn skimming into a full read.
 *
 * With look-back, names also point backwards: those chunks are read after the
 * last planned one, walking back toward the start of the book, with the same
 * memory, and what they name is followed further back.
 */

export interface FollowOptions extends SkimOptions {
  /** Read the earlier chunks that names point to after the last planned one. */
  lookBack?: boolean;
}

/** What a SkimFollower starts from: the question, the memory so far, and how it follows. */
export interface FollowStart extends FollowOptions {
  question: string;
  /** The memory so far (a resumed run's): the names it holds were looked up before. */
  memory: string;
}

/** Chunks one name may add in each direction. */
const PER_NAME = 2;

/** The most chunks following adds in each direction: as many as the ranking chose, and at least 4. */
export function followBudget(totalChunks: number, keep: number): number {
  return Math.max(4, Math.ceil(totalChunks * keep));
}

/** A name held by more chunks than this is common across the book. */
function commonAbove(totalChunks: number): number {
  return Math.max(PER_NAME, Math.ceil(totalChunks * 0.01));
}

interface NewName {
  name: string;
  term: string;
  /** Written in a sentence with one of the question's names or a name already followed. */
  near: boolean;
  idf: number;
}

type Direction = 'followed' | 'looked-back';
const DIRECTIONS: readonly Direction[] = ['followed', 'looked-back'];

/**
 * Grows a skim's plan while it is read. `plan` is the list the loop reads; it
 * is changed in place: followed chunks go into the forward part in document
 * order, looked-back ones into a tail after it, latest first.
 */
export class SkimFollower {
  /** Terms of the question, and names already looked up in each direction: only new ones are looked up. */
  private readonly seen = new Set<string>();
  private readonly looked: Record<Direction, Set<string>> = { followed: new Set(), 'looked-back': new Set() };
  /** The question's names and the names followed from them: what makes a memory sentence relevant. */
  private readonly anchors = new Set<string>();
  private readonly planned = new Set<number>();
  private readonly indexOf = new Map<number, number>();
  private readonly questionScores: number[];
  private readonly spent: Record<Direction, number> = { followed: 0, 'looked-back': 0 };
  private readonly budget: number;
  private readonly directions: readonly Direction[];
  private readonly options: FollowOptions;

  constructor(
    private readonly index: SkimIndex,
    private readonly plan: PlannedChunk[],
    { question, memory, ...options }: FollowStart,
  ) {
    this.options = options;
    index.chunks.forEach((c, i) => this.indexOf.set(c.start, i));
    for (const c of plan) {
      const i = this.indexOf.get(c.start);
      if (i !== undefined) this.planned.add(i);
      if (c.reason?.by === 'followed' || c.reason?.by === 'looked-back') this.spent[c.reason.by]++;
    }
    this.budget = followBudget(index.size, options.keep);
    this.directions = options.lookBack ? DIRECTIONS : ['followed'];
    for (const t of skimTerms(question)) this.seen.add(t);
    const names = [...entityTerms(question)].filter((t) => !STOP.has(t));
    for (const t of names.length ? names : skimTerms(question)) this.anchors.add(t);
    this.questionScores = index.scores(new Map([...new Set(skimTerms(question))].map((t) => [t, 1])));
    // A resumed run: names the memory already holds were looked up before.
    for (const name of this.newNames(memory)) for (const d of DIRECTIONS) this.looked[d].add(name.term);
  }

  /** Followed chunks still to come in each direction. */
  get left(): Record<Direction, number> {
    return { followed: this.budget - this.spent.followed, 'looked-back': this.budget - this.spent['looked-back'] };
  }

  /** After the chunk at `position` of the plan was read into `memory`: adds what its new names point to; returns whether the plan grew. */
  follow(memory: string, position: number): boolean {
    const read = this.plan[position];
    const at = read && this.indexOf.get(read.start);
    if (!read || at === undefined) return false;
    const backPass = read.reason?.by === 'looked-back';
    let grew = false;
    for (const name of this.newNames(memory)) {
      // The look-back pass only goes further back: what is ahead of it was passed over already.
      if (!backPass) grew = this.take(name, at, position, 'followed') || grew;
      if (this.options.lookBack) grew = this.take(name, at, position, 'looked-back') || grew;
    }
    return grew;
  }

  /**
   * Names in `memory` not yet looked up, most worth following first. A name
   * left out for lack of budget comes up again with the next memory that holds
   * it, perhaps next to a name followed by then.
   */
  private newNames(memory: string): NewName[] {
    const sentences = memory
      .split(/\n+|(?<=[.!?])\s+/)
      .map((s) => ({ names: nameMentions(s), terms: new Set(skimTerms(s)), near: false }))
      .filter((s) => s.names.length > 0);
    const common = commonAbove(this.index.size);
    const specific = (t: string) => t.length > 1 && !STOP.has(t) && this.index.chunksWith(t) > 0 && this.index.chunksWith(t) <= common;
    // A sentence near an anchor makes its specific names anchors too: a chain of names written down together.
    for (let changed = true; changed;) {
      changed = false;
      for (const s of sentences) {
        if (s.near || ![...s.terms].some((t) => this.anchors.has(t))) continue;
        s.near = changed = true;
        for (const n of s.names) if (specific(n.term) && !this.seen.has(n.term)) this.anchors.add(n.term);
      }
    }
    const found = new Map<string, NewName>();
    for (const s of sentences) {
      for (const n of s.names) {
        if (this.seen.has(n.term) || !specific(n.term) || this.directions.every((d) => this.looked[d].has(n.term))) continue;
        const known = found.get(n.term);
        if (known) known.near ||= s.near;
        else found.set(n.term, { ...n, near: s.near, idf: this.index.idf(n.term) });
      }
    }
    return [...found.values()].sort((a, b) => Number(b.near) - Number(a.near) || b.idf - a.idf || a.term.localeCompare(b.term));
  }

  /** Adds up to PER_NAME chunks holding `name` on one side of chunk `at`; returns whether any was added. */
  private take(name: NewName, at: number, position: number, direction: Direction): boolean {
    // Names far from the question's own may use only half of the budget.
    const limit = name.near ? this.budget : Math.ceil(this.budget / 2);
    const room = Math.min(PER_NAME, limit - this.spent[direction]);
    if (room <= 0 || this.looked[direction].has(name.term)) return false;
    this.looked[direction].add(name.term);
    const forward = direction === 'followed';
    const candidates = this.index
      .where(name.term)
      .filter((i) => (forward ? i > at : i < at) && !this.planned.has(i))
      .sort((a, b) => this.questionScores[b]! - this.questionScores[a]! || Math.abs(a - at) - Math.abs(b - at))
      .slice(0, room);
    for (const i of candidates) {
      const chunk: PlannedChunk = { ...this.index.chunks[i]!, reason: { by: direction, name: name.name } };
      this.planned.add(i);
      this.spent[direction]++;
      this.plan.splice(forward ? this.forwardSlot(chunk.start) : this.backSlot(chunk.start, position), 0, chunk);
    }
    return candidates.length > 0;
  }

  /** Where a followed chunk goes: in document order, before the look-back tail. */
  private forwardSlot(start: number): number {
    const p = this.plan.findIndex((c) => c.reason?.by === 'looked-back' || c.start > start);
    return p < 0 ? this.plan.length : p;
  }

  /** Where a looked-back chunk goes: in the tail after the chunk being read, latest first. */
  private backSlot(start: number, position: number): number {
    const tail = this.plan.findIndex((c) => c.reason?.by === 'looked-back');
    const from = Math.max(position + 1, tail < 0 ? this.plan.length : tail);
    for (let p = from; p < this.plan.length; p++) if (this.plan[p]!.start < start) return p;
    return this.plan.length;
  }
}
