/**
 * The earlier way of following the memory, kept here only as the benchmark's
 * baseline: every entity of the memory joins one query, and the same top share
 * of the whole book is selected again; chunks after the one just read that the
 * widened selection holds join the plan.
 */
import type { ChunkSpan } from '../src/core/chunker';
import { entityTerms, queryOf, type SkimIndex, type SkimOptions, skimTerms } from '../src/core/skim';

const ENTITY_WEIGHT = 3;

export class OldSkimFollower {
  private readonly query: Map<string, number>;
  private readonly planned = new Set<number>();
  private readonly indexOf = new Map<number, number>();

  constructor(
    private readonly index: SkimIndex,
    question: string,
    private readonly plan: ChunkSpan[],
    private readonly options: SkimOptions,
  ) {
    this.query = queryOf(question);
    index.chunks.forEach((c, i) => this.indexOf.set(c.start, i));
    for (const c of plan) this.planned.add(this.indexOf.get(c.start) ?? -1);
  }

  /** Adds the chunks the new memory points to; returns whether the plan changed. */
  follow(memory: string, position: number): boolean {
    const after = this.indexOf.get(this.plan[position]!.start) ?? this.index.size;
    const entities = [...entityTerms(memory)];
    if (entities.length === 0 || !this.addQuery(entities.join(' '))) return false;
    const added = this.select().filter((i) => i > after && !this.planned.has(i));
    for (const i of added) {
      this.planned.add(i);
      const span = this.index.chunks[i]!;
      const at = this.plan.findIndex((c) => c.start > span.start);
      this.plan.splice(at < 0 ? this.plan.length : at, 0, span);
    }
    return added.length > 0;
  }

  private addQuery(text: string): boolean {
    const entities = entityTerms(text);
    let grew = false;
    for (const t of skimTerms(text)) {
      const weight = entities.has(t) ? ENTITY_WEIGHT : 1;
      if ((this.query.get(t) ?? 0) < weight) {
        this.query.set(t, weight);
        grew = true;
      }
    }
    return grew;
  }

  private select(): number[] {
    const scores = this.index.scores(this.query);
    const n = scores.length;
    const top = Math.max(1, Math.ceil(n * this.options.keep));
    const ranked = scores
      .map((s, i) => [s, i] as const)
      .filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, top);
    const chosen = new Set<number>();
    for (const [, i] of ranked) {
      for (let j = i - this.options.neighbours; j <= i + this.options.neighbours; j++) if (j >= 0 && j < n) chosen.add(j);
    }
    return [...chosen];
  }
}
