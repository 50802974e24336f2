import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEpub, makePdf, prose } from './fixtures/documents';
import { runCli } from './support/cli';

const QUESTION = 'Where was the warden of Gull Rock born?';
const FACT_1 = 'The warden of Gull Rock is Orrin Vale.';
const FACT_2 = 'Orrin Vale was born in Port Meridian, far from Gull Rock.';

/** Lines of a PDF page, as makePdf draws them. */
const wrap = (s: string) => s.match(/.{1,80}(\s|$)/g)!.map((l) => l.trim());

let dir: string;
let files: string[];

function memagent(args: string[]) {
  // No prompt file can be fetched from here: reads use the app's wording, as offline.
  return runCli([...args, '--prompts-base', 'http://127.0.0.1:9'], { env: { MEMAGENT_CACHE_DIR: join(tmpdir(), 'memagent-cli-no-cache') } });
}

interface Line {
  type: string;
  index?: number;
  start?: number;
  answer?: string;
  document?: { name: string; books?: { name: string; title: string; start: number; body: number; end: number }[] };
  chunks?: [number, number, number][];
}
const journal = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memagent-set-'));
  files = [join(dir, 'a.txt'), join(dir, 'b.epub'), join(dir, 'c.pdf')];
  writeFileSync(files[0]!, `${prose(1, 60)}\n\n${FACT_1}\n\n${prose(2, 60)}`);
  writeFileSync(files[1]!, makeEpub({ title: 'The Weather Book', chapters: [{ title: 'Chapter 1: Rain', paragraphs: [prose(3, 40), prose(4, 40)] }] }));
  writeFileSync(files[2]!, await makePdf([[...wrap(prose(5, 8)), ...wrap(FACT_2), ...wrap(prose(6, 8))]]));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('memagent read with several files', () => {
  // Four reads in processes of their own: the limit catches a hang, not a machine slowed by other work.
  it(
    'reads a.txt b.epub c.pdf as one set in that order, answering from facts in two of them, and resumes a journal stopped inside the second book',
    { timeout: 240_000 },
    async () => {
      const out = join(dir, 'set.jsonl');
      const r = await memagent(['read', ...files, '-q', QUESTION, '--engine', 'extractive', '--chunk', '300', '--memory', '256', '--out', out]);
      expect(r.stderr).toContain('a.txt + b.epub + c.pdf');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(FACT_1);
      expect(r.stdout).toContain('Port Meridian');
      const lines = journal(out);
      const books = lines[0]!.document!.books!;
      expect(books.map((b) => b.name)).toEqual(['a.txt', 'b.epub', 'c.pdf']);
      expect(books[1]!.title).toBe('The Weather Book');
      // No chunk spans two books, and each book's first chunk starts at its header.
      const chunks = lines[0]!.chunks!;
      for (const [start, end] of chunks) expect(books.some((b) => b.start <= start && end <= b.end)).toBe(true);
      for (const b of books) expect(chunks.some(([start]) => start === b.start)).toBe(true);
      // Every progress line names the book the chunk is in.
      const progress = r.stderr.split('\n').filter((l) => l.startsWith('chunk '));
      expect(progress).toHaveLength(chunks.length);
      for (const l of progress) expect(l).toMatch(/ · (a\.txt|The Weather Book|c\.pdf)( · [^·]+)? · memory /);
      expect(lines.filter((l) => l.type === 'revision')).toHaveLength(chunks.length);

      // A read stopped inside the second book (its journal cut after the chunk that follows that book's header) resumes from the next chunk.
      const cutAt = chunks.findIndex(([start]) => start === books[1]!.start) + 2;
      expect(cutAt).toBeLessThan(chunks.length);
      const stopped = join(dir, 'stopped.jsonl');
      writeFileSync(
        stopped,
        readFileSync(out, 'utf8')
          .split('\n')
          .slice(0, 1 + cutAt)
          .join('\n') + '\n',
      );
      const resumed = await memagent(['read', ...files, '--engine', 'extractive', '--out', stopped, '--resume', '--progress', 'lines']);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain('Port Meridian');
      const steps = resumed.stderr.split('\n').filter((l) => l.startsWith('chunk '));
      expect(steps[0]).toMatch(new RegExp(`^chunk ${cutAt + 1}/${chunks.length} .* · The Weather Book`));
      expect(steps).toHaveLength(chunks.length - cutAt);
      const whole = journal(out).filter((l) => l.type === 'revision');
      const after = journal(stopped).filter((l) => l.type === 'revision');
      expect(after.map((l) => l.index)).toEqual(whole.map((l) => l.index));
      expect(after.map((l) => (l as { memory?: string }).memory)).toEqual(whole.map((l) => (l as { memory?: string }).memory));

      const again = await memagent(['read', ...files, '--engine', 'extractive', '--out', out, '--resume']);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('Port Meridian');
      // The same books in another order are another set: the journal refuses it.
      const other = await memagent(['read', files[2]!, files[0]!, files[1]!, '--engine', 'extractive', '--out', out, '--resume']);
      expect(other.code).not.toBe(0);
      expect(other.stderr).toContain('was written for another file');
    },
  );
});
