/**
 * Ctrl-C stops `memagent read` on the extractive engine, whose steps are
 * synchronous: the read stops at the next chunk with "Stopped…" and exit code
 * 130, its journal whole and resumable, for one question and for several.
 *
 * The interrupt is sent as soon as the first chunk's progress line is out (the
 * output is the event waited for, not a delay). Frankenstein at 100-token
 * chunks is over 1,000 steps, so the read is far from its end then: without a
 * turn of the event loop between steps, the signal would be heard only after
 * the last one, and the read would print its answer and exit with 0.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whole } from '../src/cli/numbers';
import { startCli } from './support/cli';

const BOOK = 'data/haystack/frankenstein.txt';
const READ = ['read', BOOK, '--engine', 'extractive', '--chunk', '100', '--memory', '1024', '--progress', 'lines'];
/** A generous limit: it catches a read that never stops, and no machine is that slow to start and stop. */
const HANG = 120_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memagent-stop-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; index?: number });

describe('Ctrl-C during memagent read on the extractive engine', () => {
  it(
    'stops at the next chunk with "Stopped" and exit code 130, and --resume continues the journal from the chunk after the last saved',
    async () => {
      const out = join(dir, 'one.memagent.jsonl');
      const first = startCli([...READ, '-q', 'Who is Elizabeth?', '--out', out]);
      await first.waitForStderr(/^chunk 1\/[\d,]+ /m);
      first.interrupt();
      const stopped = await first.outcome;
      expect(stopped.code).toBe(130);
      expect(stopped.stdout).toBe('');
      // The book's 1,016 chunks are counted with a thousands separator, as every number the command line prints.
      const [, savedText, totalText] =
        stopped.stderr.match(/Stopped\. ([\d,]+) of (1,016) chunks are saved in .*; run the same command with --resume to continue\./) ?? [];
      const [saved, total] = [savedText, totalText].map((n) => Number(n?.replace(/,/g, '')));
      expect(saved).toBeLessThan(total!);
      // Every chunk said saved is in the journal, whole, in order, and nothing after it.
      const journal = lines(out);
      expect(journal[0]!.type).toBe('memagent-read');
      expect(journal.slice(1).map((l) => l.index)).toEqual([...Array(saved).keys()]);

      // Ctrl-C again: the resume reads on from the next chunk, and stops as well.
      const again = startCli([...READ, '--out', out, '--resume']);
      await again.waitForStderr(new RegExp(`^chunk ${whole(saved! + 1)}/${totalText} `, 'm'));
      again.interrupt();
      const resumed = await again.outcome;
      expect(resumed.code).toBe(130);
      expect(resumed.stderr).toContain(`Resuming at chunk ${whole(saved! + 1)} of ${totalText}`);
      expect(resumed.stderr).toMatch(/Stopped\. [\d,]+ of 1,016 chunks are saved/);
      const more = lines(out).slice(1);
      expect(more.map((l) => l.index)).toEqual([...Array(more.length).keys()]);
      expect(more.length).toBeGreaterThan(saved!);
    },
    HANG,
  );

  it(
    'stops a read of several questions, started through bin/memagent.js as npx runs it, with every journal saved',
    async () => {
      const out = join(dir, 'two.memagent.jsonl');
      const run = startCli([...READ, '-q', 'Who is Elizabeth?', '-q', 'Where is Geneva?', '--out', out], { via: 'bin' });
      await run.waitForStderr(/^q\d chunk 1\/[\d,]+ /m);
      run.interrupt();
      const stopped = await run.outcome;
      expect(stopped.code).toBe(130);
      expect(stopped.stdout).toBe('');
      expect(stopped.stderr).toMatch(
        /Stopped\. Saved: q1: [\d,]+ of 1,016 chunks in .*q1\.memagent\.jsonl; q2: [\d,]+ of 1,016 chunks in .*q2\.memagent\.jsonl\. Run the same command with --resume to continue\./,
      );
      for (const n of [1, 2]) {
        const journal = lines(join(dir, `two.q${n}.memagent.jsonl`));
        expect(journal[0]!.type).toBe('memagent-read');
        expect(journal.some((l) => l.type === 'answer')).toBe(false);
        expect(journal.slice(1).map((l) => l.index)).toEqual([...Array(journal.length - 1).keys()]);
      }
    },
    HANG,
  );
});
