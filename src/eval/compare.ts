/**
 * Two methods side by side on the same items: accuracy, the share of chunks
 * read, the calls the engine answered, the tokens and the time each method
 * spent, per length (generated tasks) or per file (datasets).
 */
import { alignTable } from './report';
import { EVAL_METHOD_NAMES, EVAL_METHODS, type EvalMethod } from './infmem-read';
import type { CellSummary, SampleResult } from './sweep';
import type { ItemResult } from './method';
import { formatLength } from './lengths';

/** One item read by one method, as the comparison counts it. */
export interface MethodRun {
  method: EvalMethod;
  /** The length or file it belongs to. */
  group: string;
  /** Its score in [0, 1]; null when it could not be read (left out of the accuracy). */
  score: number | null;
  chunks: number;
  chunksRead: number;
  requests: number;
  tokens: number;
  ms: number;
}

export interface ComparisonRow {
  method: EvalMethod;
  group: string;
  items: number;
  scored: number;
  /** Mean score in [0, 1]; null when none was scored. */
  accuracy: number | null;
  chunks: number;
  chunksRead: number;
  requests: number;
  tokens: number;
  ms: number;
}

/** A generated sample as the comparison counts it. */
export function sampleRun(r: SampleResult): MethodRun {
  return {
    method: r.method ?? 'memagent',
    group: formatLength(r.length),
    score: r.scores ? r.scores.score : null,
    chunks: r.chunks,
    chunksRead: r.chunksRead ?? r.chunks,
    requests: r.requests ?? 0,
    tokens: r.promptTokens + r.completionTokens,
    ms: r.chunkMs + r.answerMs,
  };
}

/** A dataset item as the comparison counts it: accuracy is the paper's sub_em. */
export function itemRun(method: EvalMethod, r: ItemResult): MethodRun {
  return {
    method,
    group: r.file,
    score: r.scores ? r.scores.sub_em : null,
    chunks: r.chunks,
    chunksRead: r.chunksRead ?? r.chunks,
    requests: r.requests ?? 0,
    tokens: r.promptTokens + r.completionTokens,
    ms: r.ms,
  };
}

/** One row per method and group, groups in the order given, MemAgent's row first. */
export function compareMethods(runs: readonly MethodRun[], groups: readonly string[]): ComparisonRow[] {
  const rows: ComparisonRow[] = [];
  for (const group of groups) {
    for (const method of EVAL_METHODS) {
      const mine = runs.filter((r) => r.method === method && r.group === group);
      if (mine.length === 0) continue;
      const scored = mine.filter((r) => r.score !== null);
      const sum = (pick: (r: MethodRun) => number) => mine.reduce((n, r) => n + pick(r), 0);
      rows.push({
        method,
        group,
        items: mine.length,
        scored: scored.length,
        accuracy: scored.length ? scored.reduce((n, r) => n + r.score!, 0) / scored.length : null,
        chunks: sum((r) => r.chunks),
        chunksRead: sum((r) => r.chunksRead),
        requests: sum((r) => r.requests),
        tokens: sum((r) => r.tokens),
        ms: sum((r) => r.ms),
      });
    }
  }
  return rows;
}

const whole = (n: number) => Math.round(n).toLocaleString('en');

/** The comparison as a text table; `groupLabel` names the second column (length or file). */
export function formatComparison(rows: readonly ComparisonRow[], groupLabel: string): string {
  const table: string[][] = [['method', groupLabel, 'items', 'accuracy %', 'chunks read', 'read %', 'requests', 'tokens', 'time s']];
  for (const r of rows) {
    table.push([
      EVAL_METHOD_NAMES[r.method],
      r.group,
      `${whole(r.scored)}/${whole(r.items)}`,
      r.accuracy === null ? '—' : (r.accuracy * 100).toFixed(1),
      `${whole(r.chunksRead)}/${whole(r.chunks)}`,
      r.chunks ? ((r.chunksRead * 100) / r.chunks).toFixed(1) : '—',
      whole(r.requests),
      whole(r.tokens),
      (r.ms / 1000).toFixed(1),
    ]);
  }
  return `${alignTable(table)}\n`;
}

/** What an evaluation by InfMem, or by both methods, adds to its export. */
export interface ComparedReport {
  methods: EvalMethod[];
  infmem: { earlyStop: number; thinking: boolean };
  /** Each method's table, as `cells` is for one. */
  byMethod: Partial<Record<EvalMethod, CellSummary[]>>;
  comparison: ComparisonRow[];
}
