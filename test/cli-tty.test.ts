/**
 * The command line in a real pseudo-terminal (util-linux `script` gives the
 * child one), beside the same commands piped: on a terminal one progress line
 * is redrawn in place with the result below it; piped, a line per step.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli';
import { screen } from './support/terminal';

const BOOK = 'data/haystack/frankenstein.txt';
const QUESTION = 'Who is Elizabeth?';
const dir = mkdtempSync(join(tmpdir(), 'memagent-tty-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// util-linux's script (Linux) runs a command on a pseudo-terminal; BSD's takes other arguments.
const hasScript = process.platform === 'linux' && spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux');

/** The CLI on a terminal of `columns` × 30 (or of no size at all), stdout and stderr both shown there, as a person sees them. */
function onTerminal(args: string[], columns: number | null): Promise<{ code: number | null; output: string }> {
  const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const size = columns === null ? '' : `stty cols ${columns} rows 30; `;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', `${size}exec '${process.execPath}' bin/memagent.js ${quoted}`, '/dev/null'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The answer, then its sources (a quoted sentence and its place each), as `memagent read` prints them. */
function expectAnswerWithSources(lines: string[]): void {
  expect(lines[0]).toContain('Elizabeth');
  expect(lines.slice(1, 3)).toEqual(['', 'Sources:']);
  const sources = lines.slice(3);
  expect(sources.length).toBeGreaterThanOrEqual(2);
  sources.forEach((line, i) => expect(line).toMatch(i % 2 === 0 ? /^ {2}\d+\. ".+"$/ : /· written down at revision \d+/));
}

const readArgs = (out: string, ...more: string[]) => [
  'read',
  BOOK,
  '--engine',
  'extractive',
  '--question',
  QUESTION,
  '--out',
  join(dir, out),
  '--force',
  ...more,
];

describe.skipIf(!hasScript)('memagent on a terminal', () => {
  it('read redraws one progress line in place and prints the answer and its sources below it', async () => {
    const { code, output } = await onTerminal(readArgs('tty.jsonl'), 140);
    expect(code).toBe(0);
    const lines = screen(output);
    // What stays on the screen: the plan, the last progress line, the summary, the answer and its sources; no line per chunk.
    expect(lines[0]).toMatch(/^frankenstein\.txt: [\d,]+ tokens in 21 chunks/);
    expect(lines[1]).toMatch(/^\[#{20}\] chunk 21\/21 · 100% · .*memory [\d,]+ tokens · .* elapsed · answering$/);
    expect(lines[2]).toMatch(/^Read 21 chunks in [\d.]+ s; every revision is in /);
    expectAnswerWithSources(lines.slice(3));
    expect(lines[1]!.length).toBeLessThan(140);
    // Yet every chunk was drawn, each over the one before.
    const drawn = [...output.matchAll(/chunk (\d+)\/21 · /g)].map((m) => Number(m[1]));
    expect(drawn).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(output).toMatch(/about [\d.]+ s left/);
  });

  it('read --method infmem redraws its line in place, says where votes stopped it, and prints the answer and its sources below', async () => {
    const { code, output } = await onTerminal(readArgs('infmem.jsonl', '--method', 'infmem'), 140);
    expect(code).toBe(0);
    const lines = screen(output);
    expect(lines[0]).toMatch(/^frankenstein\.txt: 20 chunks of up to 5,000 tokens/);
    expect(lines[1]).toBe('Stopped before chunk 4: 3 votes in a row. Answering from the memory.');
    expect(lines[2]).toMatch(/^\[#{4}-{16}\] stopped before chunk 4 of 20 after 3 votes · answered · [\d.]+ s elapsed$/);
    expectAnswerWithSources(lines.slice(3, -1));
    expect(lines.at(-1)).toMatch(/^Read 4 of 20 chunks in [\d.]+ s; every step is in /);
    // Each chunk planned and written was drawn over the line before, with the votes to stop so far; no line per step stays.
    const drawn = [...output.matchAll(/chunk (\d+)\/20 · \d+% · (\d) of 3 votes to stop/g)].map((m) => `${m[1]}:${m[2]}`);
    expect(drawn.filter((d, i) => d !== drawn[i - 1])).toEqual(['1:0', '2:1', '3:2']);
    expect(lines.some((l) => /: planner (searched|voted)|memory written/.test(l))).toBe(false);
  });

  it('read draws its line on a terminal that reports no size', async () => {
    const { code, output } = await onTerminal(readArgs('nosize.jsonl'), null);
    expect(code).toBe(0);
    const lines = screen(output);
    expect(lines[1]).toMatch(/^chunk 21\/21 · 100% · .*answering$/);
    expect(lines[1]!.length).toBeLessThan(80);
  });

  it('read says nothing but the answer and its sources with --quiet', async () => {
    const { code, output } = await onTerminal(readArgs('quiet.jsonl', '--quiet'), 100);
    expect(code).toBe(0);
    expectAnswerWithSources(screen(output));
  });

  it('read writes a line per chunk with --progress lines, on a terminal too', async () => {
    const { output } = await onTerminal(readArgs('lines.jsonl', '--progress', 'lines'), 100);
    const lines = screen(output);
    expect(lines.filter((l) => /^chunk \d+\/21 \(\d+%\)/.test(l))).toHaveLength(21);
  });

  it('read of several questions redraws one line for them all and prints each answer under its question, no progress line among them', async () => {
    const args = ['read', BOOK, '--engine', 'extractive', '-q', QUESTION, '-q', 'Who is Justine?', '--out', join(dir, 'two.jsonl'), '--force'];
    const { code, output } = await onTerminal(args, 140);
    expect(code).toBe(0);
    const lines = screen(output);
    expect(lines[1]).toMatch(/^2 questions, read together/);
    expect(lines.filter((l) => /chunk \d+\/21/.test(l))).toEqual([]);
    const first = lines.indexOf(`Question 1: ${QUESTION}`);
    expect(first).toBeGreaterThan(1);
    expectAnswerWithSources(lines.slice(first + 1, lines.indexOf('Question 2: Who is Justine?') - 1));
    expect(output).toMatch(/chunk 21\/21 · 100% · 2 of 2 questions writing · .* elapsed · answering/);
  });

  it('eval redraws one line of samples, the current task and the time left, with the tables below', async () => {
    const { code, output } = await onTerminal(
      ['eval', '--engine', 'extractive', '--tasks', 'niah_single_1,vt', '--lengths', '8k', '--samples', '2', '--concurrency', '1'],
      100,
    );
    expect(code).toBe(0);
    const lines = screen(output);
    const bar = lines.findIndex((l) => l.includes('samples 4/4'));
    expect(lines[bar]).toMatch(/^\[#{20}\] samples 4\/4 · vt 8K #2 · [\d.]+ s elapsed · writing the table$/);
    expect(lines.slice(bar + 1).join('\n')).toMatch(/accuracy %\s+8K\nniah_single_1\s+100\.0\nvt\s+20\.0/);
    expect(lines.filter((l) => /samples \d\/4/.test(l))).toHaveLength(1);
    for (const k of [1, 2, 3]) expect(output).toMatch(new RegExp(`samples ${k}/4 · .* left`));
  });
});

describe('memagent piped', () => {
  it('read writes one line per chunk to stderr and the answer with its sources alone to stdout', async () => {
    const { code, stdout, stderr } = await runCli(readArgs('piped.jsonl'));
    expect(code).toBe(0);
    const steps = stderr.split('\n').filter((l) => l.startsWith('chunk '));
    expect(steps).toHaveLength(21);
    steps.forEach((line, i) => expect(line).toMatch(new RegExp(`^chunk ${i + 1}/21 \\(\\d+%\\) · memory [\\d,]+ tokens · [\\d.]+ s$`)));
    expect(stderr).not.toContain('\u001b[');
    expectAnswerWithSources(stdout.trim().split('\n'));
  });
});
