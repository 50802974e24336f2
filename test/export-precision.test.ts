/**
 * Files meant for comparison keep every figure as it was computed: the CLI's
 * and the app's JSON and CSV exports carry full precision, and only the
 * tables printed for people round.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { datasetReport, datasetReportJson, formatDatasetTable, summarizeFiles } from '../src/eval/dataset-report';
import type { ItemResult } from '../src/eval/method';
import { scorePrediction } from '../src/eval/paper-score';
import { buildExport, parseExport } from '../src/storage/export';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';
import { runCli } from './support/cli';

const dir = mkdtempSync(join(tmpdir(), 'memagent-precision-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** More decimals than a table shows: not a whole number, nor one rounded to hundredths. */
const finer = (x: number) => Math.abs(x * 100 - Math.round(x * 100)) > 1e-9;

describe('the CLI’s evaluation files', () => {
  it('eval --json and --csv hold each cell as computed, where the printed table rounds', async () => {
    const json = join(dir, 'sweep.json');
    const csv = join(dir, 'sweep.csv');
    const r = await runCli([
      'eval',
      '--engine',
      'extractive',
      '--tasks',
      'niah_single_1,vt',
      '--lengths',
      '8k',
      '--samples',
      '3',
      '--json',
      json,
      '--csv',
      csv,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      cells: Record<string, number | string | null>[];
      samples: { task: string; scores: { score: number }; chunkMs: number }[];
    };
    const vt = report.cells.find((c) => c.task === 'vt')!;
    // Three samples of 0.2 average to 0.20000000000000004 in binary floating point: the file says so, the table says 20.0.
    expect(vt.accuracy).toBe((0.2 + 0.2 + 0.2) / 3);
    expect(vt.accuracy).not.toBe(0.2);
    expect(r.stdout).toMatch(/^vt\s+20\.0$/m);
    // Times are kept to the fraction of a millisecond they were measured at.
    expect(report.samples.some((s) => finer(s.chunkMs))).toBe(true);
    expect(report.cells.some((c) => typeof c.meanChunkMs === 'number' && finer(c.meanChunkMs))).toBe(true);

    const [header, ...rows] = readFileSync(csv, 'utf8').trim().split('\n');
    const columns = header!.split(',');
    const fields: Record<string, string> = {
      samples: 'finished',
      accuracy: 'accuracy',
      exact_match: 'exactMatch',
      f1: 'f1',
      mean_ms_per_chunk: 'meanChunkMs',
      tokens_per_second: 'tokensPerSecond',
    };
    rows.forEach((row, i) => {
      const values = row.split(',');
      for (const [column, key] of Object.entries(fields)) {
        const cell = report.cells[i]![key];
        expect(values[columns.indexOf(column)], `${column} of row ${i + 1}`).toBe(cell === null ? '' : String(cell));
      }
    });
  });
});

describe('the read journal (memagent read)', () => {
  it('records each step’s time to the fraction of a millisecond, as the app stores it', async () => {
    const out = join(dir, 'read.jsonl');
    const r = await runCli(['read', 'data/haystack/frankenstein.txt', '--engine', 'extractive', '--question', 'Who is Elizabeth?', '--out', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; ms?: number });
    const steps = lines.filter((l) => l.type === 'revision' || l.type === 'answer');
    expect(steps.length).toBeGreaterThan(2);
    expect(steps.some((s) => finer(s.ms!))).toBe(true);
  });
});

describe('the dataset report (memagent eval --data --json, and the Evaluate page’s Export JSON)', () => {
  const item = (index: number, prediction: string, answers: string[]): ItemResult => ({
    file: 'eval_50.json',
    index,
    numDocs: 50,
    question: 'q',
    answers,
    contextTokens: 7000 + index,
    chunks: 2,
    reply: `the answer is ${prediction}`,
    prediction,
    scores: scorePrediction(prediction, answers),
    promptTokens: 0,
    completionTokens: 0,
    ms: 0,
  });

  it('keeps each sample’s f1 and the file’s metrics unrounded; the table prints two decimals', () => {
    // One word of fifteen: f1 0.125, which the paper's record rounds to 0.12; one of two: f1 2/3.
    const fifteen = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron';
    const files = summarizeFiles([{ name: 'eval_50.json', numDocs: 50 }], [item(0, 'alpha', [fifteen]), item(1, 'alpha', ['alpha beta'])]);
    const report = JSON.parse(datasetReportJson(datasetReport('recurrent', { set: 'memagent', sha256: null }, files))) as {
      datasets: { tokens: number; metrics: { sub_em: number; em: number; f1: number }; samples: { f1: number }[] }[];
    };
    const [file] = report.datasets;
    expect(file!.samples.map((s) => s.f1)).toEqual([0.125, 2 / 3]);
    expect(file!.tokens).toBe(7000.5);
    // The metric is the paper's: the mean of each f1 as its scorer records it (0.12 and 0.67), as a percentage, not rounded again.
    expect(file!.metrics.f1).toBe(((0.12 + 0.67) * 100) / 2);
    expect(formatDatasetTable(files)).toMatch(/eval_50\.json .* 100\.00 +0\.00 +39\.50 /);
  });
});

describe('a run’s JSON export', () => {
  let tok: QwenTokenizer;
  beforeAll(async () => {
    tok = await loadQwenTokenizer();
  });

  it('keeps each step’s time as measured, and reads back the same numbers', async () => {
    const { store, runner, library } = await testRunner(new ExtractiveEngine(tok), tok);
    const doc = await library.ingest('book.txt', new TextEncoder().encode(corpusText('frankenstein.txt').slice(0, 60_000)), 'extractive');
    const runId = await runner.start({ documentId: doc.id, question: 'Who is Elizabeth?', engineId: 'extractive', chunkTokens: 2000, memoryTokens: 128 });
    await until(async () => (await store.getRun(runId))?.status === 'done');
    const revisions = await store.listRevisions(runId);
    expect(revisions.some((r) => finer(r.ms))).toBe(true);
    const text = JSON.stringify(buildExport({ run: (await store.getRun(runId))!, revisions, memories: await store.listMemories(runId) }), null, 1);
    const back = parseExport(text);
    expect(back.revisions.map((r) => r.ms)).toEqual(revisions.map((r) => r.ms));
  });
});
