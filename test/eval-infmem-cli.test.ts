import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDatasetFiles, planDatasetEval, runDatasetEval } from '../src/cli/eval-data';
import { openInfmemReader } from '../src/cli/eval-infmem';
import { INFMEM_FILES } from '../src/core/infmem/official-files';
import { createEngine } from '../src/engines/registry';
import { LIST_ITEMS } from './fixtures/hotpotqa';
import { runCli } from './support/cli';
import { FNCALL_STANDIN, INFMEM_STANDIN, infmemStandinSpecs } from './support/infmem-standins';
import { type CompletionBody, startOpenAIServer } from './support/openai-server';

/** The pinned files' stand-ins, served where the reader fetches them. */
const mirrorFetch: typeof fetch = async (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  if (url.endsWith(INFMEM_FILES.infmem.path)) return new Response(new Uint8Array(INFMEM_STANDIN));
  if (url.endsWith(INFMEM_FILES.fncall.path)) return new Response(new Uint8Array(FNCALL_STANDIN));
  return fetch(input, init);
};

const dir = mkdtempSync(join(tmpdir(), 'memagent-eval-infmem-'));

interface Row {
  method: string;
  group: string;
  items: number;
  scored: number;
  accuracy: number | null;
  chunks: number;
  chunksRead: number;
  requests: number;
  tokens: number;
}

describe('memagent eval --method', () => {
  it('reads the same generated samples by both methods with the same engine and compares them', async () => {
    const json = join(dir, 'both.json');
    const out = await runCli([
      'eval',
      '--engine',
      'extractive',
      '--method',
      'both',
      '--tasks',
      'niah_single_1',
      '--lengths',
      '16k',
      '--samples',
      '2',
      '--json',
      json,
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/InfMem, early stop 3: the extractive engine's stand-ins/);
    expect(out.stdout).toMatch(/^MemAgent:$/m);
    expect(out.stdout).toMatch(/^InfMem \(early stop 3\):$/m);
    expect(out.stdout).toMatch(/^method\s+length\s+items\s+accuracy %\s+chunks read\s+read %\s+requests\s+tokens\s+time s$/m);
    expect(out.stdout).toMatch(/^MemAgent\s+16K\s+2\/2\s+[\d.]+\s+(\d+)\/\1\s+100\.0\s+[\d,]+\s+[\d,]+\s+[\d.]+$/m);
    expect(out.stdout).toMatch(/^InfMem\s+16K\s+2\/2\s+[\d.]+\s+\d+\/\d+\s+[\d.]+\s+[\d,]+\s+[\d,]+\s+[\d.]+$/m);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      methods: string[];
      samples: { method: string; ordinal: number; question: string; documentTokens: number; chunks: number; chunksRead: number; requests: number }[];
      comparison: Row[];
    };
    expect(report.methods).toEqual(['memagent', 'infmem']);
    // The same items: each ordinal's question and document by both methods.
    for (const ordinal of [0, 1]) {
      const [m, i] = ['memagent', 'infmem'].map((method) => report.samples.find((s) => s.method === method && s.ordinal === ordinal)!);
      expect(i!.question).toBe(m!.question);
      expect(i!.documentTokens).toBe(m!.documentTokens);
      expect(m!.requests).toBe(m!.chunks + 1);
      expect(i!.chunksRead).toBeLessThanOrEqual(i!.chunks);
    }
    const [mem, inf] = report.comparison;
    expect(mem).toMatchObject({ method: 'memagent', group: '16K', items: 2, scored: 2 });
    expect(mem!.chunksRead).toBe(mem!.chunks);
    expect(inf).toMatchObject({ method: 'infmem', group: '16K', items: 2, scored: 2 });
    expect(inf!.requests).toBeGreaterThan(inf!.chunksRead);
    expect(inf!.tokens).toBeGreaterThan(0);
  });

  it('reads RULER-HotpotQA files by InfMem alone and by both, scored by sub_em', async () => {
    const file = join(dir, 'eval_50.json');
    writeFileSync(file, JSON.stringify(LIST_ITEMS));
    const alone = await runCli([
      'eval',
      '--engine',
      'extractive',
      '--data',
      file,
      '--method',
      'infmem',
      '--early-stop',
      '1',
      '--json',
      join(dir, 'infmem.json'),
    ]);
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).toMatch(/^InfMem \(early stop 1\):$/m);
    expect(alone.stdout).toMatch(/^eval_50\.json\s+50\s+7K\s+[\d,]+\s+2\/2\s/m);
    const written = JSON.parse(readFileSync(join(dir, 'infmem.json'), 'utf8')) as { method: string; earlyStop: number; datasets: { samples: unknown[] }[] };
    expect(written).toMatchObject({ method: 'infmem', earlyStop: 1, thinking: true });
    expect(written.datasets[0]!.samples).toHaveLength(2);

    const both = await runCli(['eval', '--engine', 'extractive', '--data', file, '--method', 'both', '--json', join(dir, 'data-both.json')]);
    expect(both.code, both.stderr).toBe(0);
    expect(both.stdout).toMatch(/^Both methods on the same items, the same engine \(accuracy: sub_em\):$/m);
    expect(both.stdout).toMatch(/^MemAgent\s+eval_50\.json\s+2\/2\s/m);
    expect(both.stdout).toMatch(/^InfMem\s+eval_50\.json\s+2\/2\s/m);
    const report = JSON.parse(readFileSync(join(dir, 'data-both.json'), 'utf8')) as { methods: string[]; reports: { method: string }[]; comparison: Row[] };
    expect(report.methods).toEqual(['memagent', 'infmem']);
    expect(report.reports.map((r) => r.method)).toEqual(['recurrent-boxed', 'infmem']);
    expect(report.comparison.map((r) => [r.method, r.group, r.items])).toEqual([
      ['memagent', 'eval_50.json', 2],
      ['infmem', 'eval_50.json', 2],
    ]);
  });

  it('refuses flags that cannot work, saying what to change', async () => {
    const cases: [string[], RegExp][] = [
      [['--method', 'memagnet'], /--method is memagent \(the default\), infmem or both, not "memagnet"/],
      [['--method', 'recurrent'], /--method recurrent goes with --data/],
      [['--early-stop', '2'], /--early-stop is for InfMem: add --method infmem or --method both/],
      [['--method', 'both', '--mode', 'full'], /--mode full .* goes with MemAgent only/],
      [['--method', 'infmem', '--thinking', 'maybe'], /--thinking is on .* or off, not "maybe"/],
    ];
    for (const [args, message] of cases) {
      const out = await runCli(['eval', '--engine', 'extractive', '--tasks', 'vt', ...args]);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr).toMatch(message);
    }
  });
});

describe('memagent eval --data --method infmem against a server', () => {
  it("sends InfMem's requests to /v1/completions at temperature 0 and top p 1, and scores the final reply as ruler_hqa.py does", async () => {
    const answers = ['Therefore, the answer is **Lake Oster**.', 'the answer is bells and whistles'];
    let finals = 0;
    const server = await startOpenAIServer({
      completions: (body: CompletionBody) => {
        const prompt = String(body.prompt);
        const stage2 = !prompt.endsWith('<|im_start|>assistant\n');
        if (prompt.includes('Stand-in planner.')) return stage2 ? 'STOP' : 'Enough in the notes.</think>';
        if (prompt.includes('Stand-in writer')) return stage2 ? 'notes' : 'Folding.</think>';
        return stage2 ? answers[finals++ % 2]! : 'Answering.</think>';
      },
    });
    try {
      const file = join(dir, 'eval_50.json');
      writeFileSync(file, JSON.stringify(LIST_ITEMS));
      const plan = planDatasetEval({ data: [file], concurrency: 1 });
      await checkDatasetFiles(plan);
      const engine = await createEngine('openai', { baseUrl: server.url });
      const settings = { earlyStop: 1, thinking: true };
      const reader = await openInfmemReader({ 'base-url': server.url }, 'openai', settings, {
        say: () => undefined,
        environment: { specs: await infmemStandinSpecs(), cacheDir: join(dir, 'cache'), fetch: mirrorFetch },
        verbatim: true,
      });
      let table = '';
      const code = await runDatasetEval(
        plan,
        engine,
        { say: (l) => (table += l), error: (l) => (table += l), out: (t) => (table += t), write: () => undefined, describeEngine: 'test server' },
        { methods: ['infmem'], infmem: { ...settings, reader } },
      );
      expect(code, table).toBe(0);
      // Early stop 1 and a planner that stops: per item, one plan (two stages) and the final answer (two stages).
      expect(server.completionBodies).toHaveLength(2 * 4);
      for (const body of server.completionBodies) expect([body.temperature, body.top_p]).toEqual([0, 1]);
      expect(table).toMatch(/^eval_50\.json\s+50\s+7K\s+[\d,]+\s+2\/2\s+50\.00\s+50\.00\s+/m);
      expect(table).toContain('InfMem (early stop 1):');
    } finally {
      await server.stop();
    }
  });
});
