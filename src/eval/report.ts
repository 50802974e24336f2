import type { PromptRecord } from '../core/prompt-sets';
import { formatLength } from './lengths';
import type { CellSummary, SampleResult, SweepSpec } from './sweep';

/** What an export holds: enough to redraw the table and to recheck any sample. */
export interface EvaluationReport {
  engine: string;
  model?: string;
  haystack: string;
  /** The prompt set the templates in `spec` are. */
  prompts?: PromptRecord;
  spec: SweepSpec;
  cells: CellSummary[];
  samples: SampleResult[];
}

export function formatPercent(x: number | null): string {
  return x === null ? '—' : `${(x * 100).toFixed(1)}`;
}

export function formatMs(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 10) return ms.toFixed(2);
  if (ms < 100) return ms.toFixed(1);
  return Math.round(ms).toLocaleString('en');
}

export function formatRate(perSecond: number | null): string {
  return perSecond === null ? '—' : Math.round(perSecond).toLocaleString('en');
}

/** Columns padded to their widest cell; the first left-aligned, the rest right-aligned. */
export function alignTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * The paper's table (accuracy %, task × length, with a mean row) followed by
 * the detail per cell: samples, accuracy, mean time per chunk and tokens/s.
 */
export function formatTables(spec: Pick<SweepSpec, 'tasks' | 'lengths'>, cells: readonly CellSummary[]): string {
  const lengths = [...spec.lengths].sort((a, b) => a - b);
  const cell = (task: string, length: number) => cells.find((c) => c.task === task && c.length === length);
  const pivot: string[][] = [['accuracy %', ...lengths.map(formatLength)]];
  for (const task of spec.tasks) pivot.push([task, ...lengths.map((l) => formatPercent(cell(task, l)?.accuracy ?? null))]);
  if (spec.tasks.length > 1) {
    pivot.push([
      'mean',
      ...lengths.map((l) => {
        const acc = spec.tasks.map((t) => cell(t, l)?.accuracy).filter((a): a is number => a !== null && a !== undefined);
        return formatPercent(acc.length ? acc.reduce((a, b) => a + b, 0) / acc.length : null);
      }),
    ]);
  }
  const detail: string[][] = [['task', 'length', 'samples', 'accuracy %', 'ms/chunk', 'tokens/s']];
  for (const c of cells) {
    detail.push([
      c.task,
      formatLength(c.length),
      `${c.scored}/${c.planned}${notScored(c)}`,
      formatPercent(c.accuracy),
      formatMs(c.meanChunkMs),
      formatRate(c.tokensPerSecond),
    ]);
  }
  return `${alignTable(pivot)}\n\n${alignTable(detail)}\n`;
}

/** Why some of a cell's samples have no score: " (1 too long, 2 failed)", or nothing. */
function notScored(c: CellSummary): string {
  const parts = [c.skipped ? `${c.skipped} too long` : '', c.failed ? `${c.failed} failed` : ''].filter(Boolean);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

function csvField(v: string | number | null | undefined): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The results table as CSV: one row per task × length, scores in [0, 1]. */
export function cellsCsv(cells: readonly CellSummary[]): string {
  const header = ['task', 'length', 'samples', 'scored', 'skipped', 'accuracy', 'exact_match', 'f1', 'mean_ms_per_chunk', 'tokens_per_second'];
  const rows = cells.map((c) => [c.task, c.length, c.finished, c.scored, c.skipped, c.accuracy, c.exactMatch, c.f1, c.meanChunkMs, c.tokensPerSecond]);
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

export function reportJson(report: EvaluationReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
