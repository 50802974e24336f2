/**
 * `memagent read` with several questions, on the extractive engine: the book
 * read once, each question answered under its heading with its sources, one
 * journal per question, and a resume that continues every journal.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournalHeader } from '../src/cli/journal';
import { questionSeed } from '../src/core/plan';
import { OrderedOutput, type Question } from '../src/cli/question-output';
import { questionJournal } from '../src/cli/questions';
import type { ReadSources } from '../src/cli/sources';
import { prose } from './fixtures/documents';
import { type CliOutcome, runCli } from './support/cli';

const QUESTIONS = ['Where was the warden of Gull Rock born?', 'What colour is the lighthouse on Gull Rock?', 'Who built the bridge at Saltmarsh?'];
const FACTS = [
  'The warden of Gull Rock was born in Port Meridian.',
  'The lighthouse on Gull Rock is painted a deep red colour.',
  'The bridge at Saltmarsh was built by Ada Penhallow.',
];

let dir: string;
let book: string;
/** The uninterrupted read of the three questions: what a resumed read must end with. */
let reference: { stdout: string; journals: Line[][] };

function memagent(args: string[]): Promise<CliOutcome> {
  // No prompt file can be fetched from here: reads use the app's wording, as offline.
  return runCli([...args, '--prompts-base', 'http://127.0.0.1:9'], { env: { MEMAGENT_CACHE_DIR: join(tmpdir(), 'memagent-cli-no-cache') } });
}

const read = (out: string, ...more: string[]) => memagent(['read', book, '--engine', 'extractive', '--chunk', '300', '--memory', '256', '--out', out, ...more]);
const asked = (questions: readonly string[]) => questions.flatMap((q) => ['-q', q]);

interface Line {
  type: string;
  index?: number;
  memory?: string;
  answer?: string;
  question?: string;
  chunks?: [number, number, number][];
  createdAt?: string;
  settings?: { seed?: number };
}
const journal = (path: string): Line[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
/** What a read must reproduce of a journal: each chunk's memory, then the answer. */
const steps = (lines: Line[]) => lines.slice(1).map((l) => [l.type, l.index, l.memory, l.answer]);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memagent-questions-'));
  book = join(dir, 'gull-rock.txt');
  writeFileSync(book, [prose(1, 30), FACTS[0], prose(2, 40), FACTS[1], prose(3, 40), FACTS[2], prose(4, 30)].join('\n\n'));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('memagent read with several questions', () => {
  it('reads the book once for three --question flags and prints each answer under its question with its sources, one journal each', async () => {
    const out = join(dir, 'three.memagent.jsonl');
    const r = await read(out, ...asked(QUESTIONS), '--progress', 'lines', '--seed', '7');
    expect(r.code).toBe(0);
    const blocks = r.stdout.split(/^(?=Question \d: )/m);
    expect(blocks).toHaveLength(3);
    blocks.forEach((block, i) => {
      expect(block.startsWith(`Question ${i + 1}: ${QUESTIONS[i]}\n`)).toBe(true);
      const [answer, sources] = block.split('\nSources:\n');
      expect(answer).toContain(FACTS[i]);
      expect(sources).toContain(`"${FACTS[i]}"`);
    });
    const paths = [1, 2, 3].map((n) => join(dir, `three.q${n}.memagent.jsonl`));
    const journals = paths.map(journal);
    journals.forEach((lines, i) => expect(lines[0]).toMatchObject({ type: 'memagent-read', question: QUESTIONS[i] }));
    // Each question samples with its own seed, the first with the read's (a resume below continues them).
    expect(journals.map((lines) => lines[0]!.settings!.seed)).toEqual([7, questionSeed(7, 1), questionSeed(7, 2)]);
    expect(new Set(journals.map((lines) => lines[0]!.settings!.seed)).size).toBe(3);
    // One plan and one cut of the book for all: the questions read the same chunks, together.
    const chunks = journals[0]![0]!.chunks!;
    for (const lines of journals) {
      expect(lines[0]!.chunks).toEqual(chunks);
      expect(lines.slice(1).map((l) => l.index ?? l.type)).toEqual([...chunks.map((_, i) => i), 'answer']);
    }
    // Progress names each question's chunk and how many questions are still writing.
    const progress = r.stderr.split('\n').filter((l) => /^q\d chunk /.test(l));
    expect(progress).toHaveLength(3 * chunks.length);
    expect(progress[0]).toMatch(new RegExp(`^q1 chunk 1/${chunks.length} \\(\\d+%\\) · memory \\d+ tokens · .* · 3 of 3 questions writing$`));
    reference = { stdout: r.stdout, journals };

    // Each question's steps are those a read of that question alone takes.
    const alone = join(dir, 'alone.jsonl');
    const single = await read(alone, '-q', QUESTIONS[1]!);
    expect(single.code).toBe(0);
    expect(steps(journal(alone))).toEqual(steps(journals[1]!));
    expect(single.stdout.startsWith('Question')).toBe(false);
  });

  it('takes questions from --questions-file after the --question flags, and with --json prints one answer line per question in that order', async () => {
    const file = join(dir, 'questions.txt');
    writeFileSync(file, `\n${QUESTIONS[2]}\r\n\n   \n${QUESTIONS[1]}\n`);
    const r = await read(join(dir, 'file.jsonl'), '-q', QUESTIONS[0]!, '--questions-file', file, '--json');
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; question: string; answer: string; sources: ReadSources });
    expect(lines.map((l) => [l.type, l.question])).toEqual([
      ['answer', QUESTIONS[0]],
      ['answer', QUESTIONS[2]],
      ['answer', QUESTIONS[1]],
    ]);
    lines.forEach((l, i) => {
      const fact = FACTS[[0, 2, 1][i]!]!;
      expect(l.answer).toContain(fact);
      expect(l.sources.citations.map((c) => c.sentence?.text)).toContain(fact);
    });
    // The journals are numbered in the same order: the file's first question is q2.
    expect(journal(join(dir, 'file.q2.jsonl'))[0]!.question).toBe(QUESTIONS[2]);
  });

  it('resumes every journal where it stopped, printing the answered question again, and ends with the answers of a read never stopped', async () => {
    const out = join(dir, 'stopped.memagent.jsonl');
    const paths = [1, 2, 3].map((n) => join(dir, `stopped.q${n}.memagent.jsonl`));
    // q1 answered; q2 stopped after two chunks; q3 after its header, with a line half written as the process died.
    copyFileSync(join(dir, 'three.q1.memagent.jsonl'), paths[0]!);
    const cut = (lines: Line[], keep: number) =>
      `${lines
        .slice(0, keep)
        .map((l) => JSON.stringify(l))
        .join('\n')}\n`;
    writeFileSync(paths[1]!, cut(reference.journals[1]!, 3));
    writeFileSync(paths[2]!, `${cut(reference.journals[2]!, 1)}{"type":"revision","index":0,"memo`);

    // Without the questions, the resume takes them from the journals.
    const r = await read(out, '--resume', '--progress', 'lines');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`q1: ${paths[0]} is a finished read`);
    expect(r.stderr).toContain(`q2: resuming at chunk 3 of `);
    expect(r.stderr).toContain(`q3: resuming at chunk 1 of `);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('q2 chunk '))[0]).toMatch(/^q2 chunk 3\//);
    expect(r.stdout).toBe(reference.stdout);
    paths.forEach((p, i) => expect(steps(journal(p))).toEqual(steps(reference.journals[i]!)));
    // It says what this run read of each question it read, beside what was read before.
    const total = reference.journals[0]![0]!.chunks!.length;
    expect(r.stderr).toMatch(
      new RegExp(
        `^Read ${total} chunks for 3 questions in [\\d.]+ s, resumed: this run read ${total - 2} for q2 \\(2 read before\\), ${total} for q3 \\(0 read before\\); every revision is in their journals\\.$`,
        'm',
      ),
    );

    // With the questions, as the first command gave them, a finished read prints the same again.
    const again = await read(out, ...asked(QUESTIONS), '--resume');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(reference.stdout);
  });

  it('refuses questions it cannot read, and a resume whose questions disagree with the journals, before reading', async () => {
    const out = join(dir, 'three.memagent.jsonl');
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '\n  \n\n');
    const twice = join(dir, 'twice.txt');
    writeFileSync(twice, `${QUESTIONS[1]}\n${QUESTIONS[0]}\n`);
    const [blank, missing, repeated, reordered, fewer, overwrite, one] = await Promise.all([
      read(join(dir, 'x.jsonl'), '-q', QUESTIONS[0]!, '--questions-file', empty),
      read(join(dir, 'x.jsonl'), '--questions-file', join(dir, 'no-such.txt')),
      read(join(dir, 'x.jsonl'), '-q', QUESTIONS[0]!, '--questions-file', twice),
      read(out, ...asked([QUESTIONS[1]!, QUESTIONS[0]!, QUESTIONS[2]!]), '--resume'),
      read(out, ...asked(QUESTIONS.slice(0, 2)), '--resume'),
      read(out, ...asked(QUESTIONS)),
      // One question given, and no journal of one question: the numbered journals are found, not a new read begun beside them.
      read(out, '-q', QUESTIONS[0]!, '--resume'),
    ]);
    for (const r of [blank, missing, repeated, reordered, fewer, overwrite, one]) expect(r.code).toBe(2);
    expect(blank.stderr).toContain(`${empty} holds no question: write one question a line.`);
    expect(missing.stderr).toContain('There is no questions file');
    expect(repeated.stderr).toContain(`The question "${QUESTIONS[0]}" is given twice`);
    expect(reordered.stderr).toContain(
      `The journals on disk and the questions given disagree: ${join(dir, 'three.q1.memagent.jsonl')} reads for "${QUESTIONS[0]}", not "${QUESTIONS[1]}".`,
    );
    expect(fewer.stderr).toContain(`disagree: ${join(dir, 'three.q3.memagent.jsonl')} holds a question beyond the 2 given.`);
    expect(overwrite.stderr).toContain('already holds a read. Continue it with --resume, start over with --force');
    expect(one.stderr).toContain(`disagree: ${join(dir, 'three.q2.memagent.jsonl')} holds a question beyond the 1 given.`);
    expect(existsSync(out)).toBe(false);
    // Nothing was written over.
    expect(journal(join(dir, 'three.q1.memagent.jsonl'))[0]!.createdAt).toBe(reference.journals[0]![0]!.createdAt);
  });
});

describe('--resume with no journal to continue', () => {
  it('says so and reads from the first chunk where questions are given, refuses where none is, and after a resume says what this run read', async () => {
    const [one, several, none] = await Promise.all([
      read(join(dir, 'new.jsonl'), '-q', QUESTIONS[0]!, '--resume'),
      read(join(dir, 'new-two.jsonl'), ...asked(QUESTIONS.slice(0, 2)), '--resume'),
      read(join(dir, 'none.jsonl'), '--resume'),
    ]);
    expect(one.code).toBe(0);
    expect(one.stderr).toContain(
      `--resume: there is no journal to continue (neither ${join(dir, 'new.jsonl')} nor ${join(dir, 'new.q1.jsonl')} (a read of several questions) is there), so this read starts at the first chunk.`,
    );
    expect(one.stdout).toContain(FACTS[0]);
    expect(several.code).toBe(0);
    expect(several.stderr).toContain(
      `--resume: there are no journals to continue (no ${join(dir, 'new-two.q1.jsonl')} to ${join(dir, 'new-two.q2.jsonl')}), so this read starts at the first chunk.`,
    );
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /^--resume has no journal to continue: neither .*none\.jsonl nor .*none\.q1\.jsonl \(a read of several questions\) is there\. Name the journal with --out FILE, or give --question "\.\.\." to start a new read\.\n/,
    );

    // The one question's read stopped after two chunks, then resumed: this run read the rest.
    const lines = journal(join(dir, 'new.jsonl'));
    const total = lines[0]!.chunks!.length;
    writeFileSync(
      join(dir, 'new.jsonl'),
      `${lines
        .slice(0, 3)
        .map((l) => JSON.stringify(l))
        .join('\n')}\n`,
    );
    const resumed = await read(join(dir, 'new.jsonl'), '--resume');
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`^Read the last ${total - 2} of ${total} chunks \\(2 were read before\\) in [\\d.]+ s; every revision`, 'm'));
    expect(resumed.stdout).toBe(one.stdout);
  });
});

describe('the parts of a read of several questions', () => {
  it('names each question’s journal with its number before the journal’s ending', () => {
    expect(questionJournal('book.txt.memagent.jsonl', 2)).toBe('book.txt.q2.memagent.jsonl');
    expect(questionJournal('runs/read.JSONL', 1)).toBe('runs/read.q1.JSONL');
    expect(questionJournal('runs/read', 3)).toBe('runs/read.q3');
  });

  it('prints each answer once it and every answer before it are settled, in the questions’ order', () => {
    const printed: string[] = [];
    const question = (n: number): Question => ({ n, path: `read.q${n}.jsonl`, header: { question: `Q${n}?` } as JournalHeader, memories: [], step: 0 });
    const questions = [1, 2, 3].map(question);
    const output = new OrderedOutput(questions, 4, true, (text) => printed.push(text));
    const none: ReadSources = { citations: [], unsourced: [] };
    output.settle(questions[2]!, { kind: 'answer', answer: 'A3', sources: none });
    output.settle(questions[1]!, { kind: 'failed', error: 'The server failed.' });
    expect(printed).toEqual([]);
    output.settle(questions[0]!, { kind: 'answer', answer: 'A1', sources: none });
    expect(printed.map((l) => JSON.parse(l) as { type: string; question: string })).toEqual([
      { type: 'answer', question: 'Q1?', answer: 'A1', sources: none },
      { type: 'failed', question: 'Q2?', error: 'The server failed.', journal: 'read.q2.jsonl' },
      { type: 'answer', question: 'Q3?', answer: 'A3', sources: none },
    ]);
  });
});
