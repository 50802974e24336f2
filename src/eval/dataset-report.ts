import type { PromptRecord } from '../core/prompt-sets';
import { pyRound } from '../core/pytext';
import type { ItemResult, MethodId } from './method';
import { type PaperMetrics, paperMetrics } from './paper-score';
import { alignTable } from './report';

/**
 * The paper's RULER-HotpotQA figures (sub_em %, from its results table) by document count:
 * 50 documents make about 7K tokens, and each doubling doubles the length.
 */
const PAPER: Readonly<Record<number, { length: string; rl7b?: number; rl14b?: number }>> = {
  50: { length: '7K', rl7b: 82.0, rl14b: 83.6 },
  100: { length: '14K' },
  200: { length: '28K', rl7b: 78.9, rl14b: 84.4 },
  400: { length: '56K' },
  800: { length: '112K', rl7b: 79.7, rl14b: 76.6 },
  1600: { length: '224K' },
  3200: { length: '448K', rl7b: 74.2, rl14b: 75.0 },
  6400: { length: '896K', rl7b: 76.6, rl14b: 77.3 },
};

/** The paper's length for a document count, and its RL-MemoryAgent-7B and -14B figures where the paper gives them. */
export function paperFigures(numDocs: number | null): { length: string | null; rl7b: number | null; rl14b: number | null } {
  const p = numDocs === null ? undefined : PAPER[numDocs];
  return { length: p?.length ?? null, rl7b: p?.rl7b ?? null, rl14b: p?.rl14b ?? null };
}

/** Which prompts a report was made with: the set (memagent, memagent-boxed, app, custom) and, for an official file, its SHA-256. */
export interface PromptsUsed {
  set: string;
  sha256: string | null;
}

/** What a report records of the prompt set a run used. */
export function promptsUsed(record: PromptRecord): PromptsUsed {
  return { set: record.set, sha256: record.file?.sha256 ?? null };
}

export interface DatasetSample {
  index: number;
  prediction: string | null;
  answers: string[];
  sub_em: 0 | 1;
  em: 0 | 1;
  f1: number;
}

export interface DatasetSummary {
  file: string;
  num_docs: number | null;
  /** Mean tokens of the stripped contexts read. */
  tokens: number | null;
  metrics: PaperMetrics | null;
  /** Scored samples; failed ones are left out, as the paper leaves them out. */
  samples: DatasetSample[];
}

/** What `memagent eval --data … --json OUT` writes and the Evaluate page exports. */
export interface DatasetReport {
  /** MemAgent's paper method, or InfMem's. */
  method: MethodId | 'infmem';
  prompts: PromptsUsed;
  datasets: DatasetSummary[];
}

/** One file's results: its counts beside its summary. */
export interface FileResults {
  summary: DatasetSummary;
  finished: number;
  failed: number;
  /** Items in the file, when known. */
  planned?: number;
}

/** Results grouped by file, in the order the files are given. */
export function summarizeFiles(files: readonly { name: string; numDocs: number | null; items?: number }[], results: readonly ItemResult[]): FileResults[] {
  return files.map((f) => {
    const mine = results.filter((r) => r.file === f.name).sort((a, b) => a.index - b.index);
    const scored = mine.filter((r) => r.scores !== null);
    const samples = scored.map((r) => ({ index: r.index, prediction: r.prediction, answers: r.answers, ...r.scores! }));
    const tokens = mine.length ? mine.reduce((n, r) => n + r.contextTokens, 0) / mine.length : null;
    return {
      summary: { file: f.name, num_docs: f.numDocs ?? mine[0]?.numDocs ?? null, tokens, metrics: paperMetrics(samples), samples },
      finished: mine.length,
      failed: mine.length - scored.length,
      ...(f.items !== undefined && { planned: f.items }),
    };
  });
}

export function datasetReport(method: DatasetReport['method'], prompts: PromptsUsed, files: readonly FileResults[]): DatasetReport {
  return { method, prompts, datasets: files.map((f) => f.summary) };
}

function percent(x: number | null | undefined): string {
  // Rounded as the paper prints its figures (Python's round), only here in the printed table.
  return x === null || x === undefined ? '—' : pyRound(x, 2).toFixed(2);
}

/** The printed table: each file's metrics beside the paper's RL-MemoryAgent-7B and -14B at its length. */
export function formatDatasetTable(files: readonly FileResults[]): string {
  const rows: string[][] = [['file', 'docs', 'length', 'tokens', 'samples', 'sub_em %', 'em %', 'f1 %', 'paper 7B', 'paper 14B']];
  for (const f of files) {
    const s = f.summary;
    const paper = paperFigures(s.num_docs);
    const scored = f.finished - f.failed;
    rows.push([
      s.file,
      s.num_docs === null ? '—' : String(s.num_docs),
      paper.length ?? '—',
      s.tokens === null ? '—' : Math.round(s.tokens).toLocaleString('en'),
      `${scored}/${f.planned ?? f.finished}${f.failed ? ` (${f.failed} failed)` : ''}`,
      percent(s.metrics?.sub_em),
      percent(s.metrics?.em),
      percent(s.metrics?.f1),
      paper.rl7b === null ? '—' : paper.rl7b.toFixed(1),
      paper.rl14b === null ? '—' : paper.rl14b.toFixed(1),
    ]);
  }
  return `${alignTable(rows)}\n`;
}

export function datasetReportJson(report: DatasetReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
