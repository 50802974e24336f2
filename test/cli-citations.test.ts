import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadSources } from '../src/cli/sources';
import { prose } from './fixtures/documents';
import { runCli } from './support/cli';

const QUESTION = 'Where was the warden of Gull Rock born?';
const FACT_1 = 'The warden of Gull Rock is Orrin Vale.';
const FACT_2 = 'Orrin Vale was born in Port Meridian, far from the sea.';

let dir: string;
let book: string;
let text: string;

function memagent(args: string[]) {
  // No prompt file can be fetched from here: reads use the app's wording, as offline.
  return runCli([...args, '--prompts-base', 'http://127.0.0.1:9'], { env: { MEMAGENT_CACHE_DIR: join(tmpdir(), 'memagent-cli-no-cache') } });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memagent-cite-'));
  book = join(dir, 'gull-rock.txt');
  // The two parts of the fact far apart, each its own paragraph, in a book of many chunks.
  text = [prose(1, 80), FACT_1, prose(2, 120), FACT_2, prose(3, 80)].join('\n\n');
  writeFileSync(book, text);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('memagent read prints the answer’s sources', () => {
  it('after the answer, each part of a two-part fact quoted with its section, and in the journal and --json with positions', async () => {
    const out = join(dir, 'read.jsonl');
    const args = ['read', book, '-q', QUESTION, '--engine', 'extractive', '--chunk', '400', '--memory', '256', '--out', out];
    const r = await memagent(args);
    expect(r.code).toBe(0);
    // The line before reading names the prompt set mid-sentence.
    expect(r.stderr).toContain("; engine extractive; prompts: this app's wording.\n");
    // The extractive engine answers with the note nearest the question, the first part; the sources name both.
    const [answer, sourcesText] = r.stdout.split('\nSources:\n');
    expect(answer).toContain(FACT_1);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const chunks = (lines[0]!.chunks as [number, number, number][]).length;
    const sections = [FACT_1, FACT_2].map((f) => {
      const at = text.indexOf(f);
      return (lines[0]!.chunks as [number, number, number][]).findIndex(([start, end]) => start <= at && at < end) + 1;
    });
    expect(sections[0]).toBeLessThan(sections[1]!);
    expect(sourcesText).toContain(`"${FACT_1}"\n     section ${sections[0]} of ${chunks} · written down at revision ${sections[0]}`);
    expect(sourcesText).toContain(`"${FACT_2}"\n     section ${sections[1]} of ${chunks} · written down at revision ${sections[1]}`);

    // The journal's answer line keeps the sources, numbered as printed and as its revision lines number them; sentences by their characters in the book.
    const journalled = lines.at(-1)!.sources as ReadSources;
    const revisionLines = lines.filter((l) => l.type === 'revision');
    expect(revisionLines.map((l) => l.revision)).toEqual(revisionLines.map((_, i) => i + 1));
    for (const [i, fact] of [FACT_1, FACT_2].entries()) {
      const c = journalled.citations.find((c) => c.sentence?.text === fact)!;
      expect(c.revision).toBe(sections[i]);
      expect(c.keptUntil).toBe(chunks);
      expect(sourcesText).toContain(`written down at revision ${c.revision}, kept to revision ${c.keptUntil}`);
      expect(revisionLines.find((l) => l.revision === c.revision)!.memory).toContain(fact);
      expect(text.slice(c.sentence!.start, c.sentence!.end)).toBe(fact);
    }

    // --json: one JSON line with the same sources; a finished journal prints them again.
    const json = await memagent([...args.slice(0, -2), '--out', join(dir, 'json.jsonl'), '--json']);
    expect(json.code).toBe(0);
    const line = JSON.parse(json.stdout) as { type: string; answer: string; sources: ReadSources };
    expect(line.type).toBe('answer');
    expect(line.sources).toEqual(journalled);
    const again = await memagent(['read', book, '--engine', 'extractive', '--out', out, '--resume', '--json']);
    expect((JSON.parse(again.stdout) as { sources: ReadSources }).sources).toEqual(journalled);
  });

  it('prints the sources of a journal written when they were numbered from 0 with the numbers it prints today', async () => {
    const out = join(dir, 'old.jsonl');
    const args = ['read', book, '-q', QUESTION, '--engine', 'extractive', '--chunk', '400', '--memory', '256', '--out', out, '--json'];
    const today = JSON.parse((await memagent(args)).stdout) as { sources: ReadSources };
    // The same journal as version 1 wrote it: no revision numbers on its lines, the sources' revisions from 0.
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const old = lines.map((l) => {
      if (l.type === 'memagent-read') return { ...l, version: 1 };
      if (l.type === 'revision') return { ...l, revision: undefined };
      const sources = l.sources as ReadSources;
      return { ...l, sources: { ...sources, citations: sources.citations.map((c) => ({ ...c, revision: c.revision - 1, keptUntil: c.keptUntil - 1 })) } };
    });
    writeFileSync(out, old.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const again = await memagent(['read', book, '--engine', 'extractive', '--out', out, '--resume', '--json']);
    expect(again.code).toBe(0);
    expect((JSON.parse(again.stdout) as { sources: ReadSources }).sources).toEqual(today.sources);

    // Resumed before its answer, it is finished in its own numbering.
    writeFileSync(
      out,
      old
        .slice(0, -1)
        .map((l) => `${JSON.stringify(l)}\n`)
        .join(''),
    );
    const finished = await memagent(['read', book, '--engine', 'extractive', '--out', out, '--resume', '--json']);
    expect((JSON.parse(finished.stdout) as { sources: ReadSources }).sources).toEqual(today.sources);
    const answer = JSON.parse(readFileSync(out, 'utf8').trim().split('\n').at(-1)!) as { sources: ReadSources };
    expect(answer.sources).toEqual((old.at(-1) as { sources: ReadSources }).sources);
  });
});
