import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryFromReply } from '../src/core/answer';
import { INITIAL_MEMORY, renderTemplate } from '../src/core/prompts';
import { pyStrip } from '../src/core/pytext';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { checkDatasetFiles, planDatasetEval } from '../src/cli/eval-data';
import { LINE_ITEMS, LIST_ITEMS, STAND_IN_TEMPLATES as TEMPLATES } from './fixtures/hotpotqa';
import { type OpenAITestServer, type RequestRecord, startOpenAIServer } from './support/openai-server';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function memagent(args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/memagent.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const CHUNK = 120;

let tok: QwenTokenizer;
let server: OpenAITestServer;
let dir: string;
/** Every reply the server sent, in order (requests are read one at a time). */
const replies: string[] = [];
let listFile: string;
let linesFile: string;
let promptsFile: string;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  // Replies with spaces around them, and one with a reasoning part, as models write them.
  server = await startOpenAIServer({
    keepBodies: true,
    reply: (text, messages) => {
      const reply = messages[0]!.content.includes('<section>') && replies.length % 3 === 1 ? `<think>scratch work</think>\n ${text} \n` : `  ${text}\n`;
      replies.push(reply);
      return reply;
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'memagent-data-'));
  listFile = join(dir, 'eval_50.json');
  linesFile = join(dir, 'eval_200.jsonl');
  promptsFile = join(dir, 'stand-in.json');
  writeFileSync(listFile, JSON.stringify(LIST_ITEMS, null, 2));
  writeFileSync(linesFile, LINE_ITEMS.map((i) => JSON.stringify(i)).join('\n'));
  writeFileSync(promptsFile, JSON.stringify(TEMPLATES));
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The user message of a logged request. */
function message(r: RequestRecord): string {
  const messages = r.body!.messages as { role: string; content: string }[];
  expect(messages).toHaveLength(1);
  expect(messages[0]!.role).toBe('user');
  return messages[0]!.content;
}

describe('memagent eval --data', () => {
  it("sends the paper's requests for every item, scores the answers and writes the report", async () => {
    const json = join(dir, 'report.json');
    const r = await memagent([
      'eval', '--base-url', server.url, '--data', listFile, '--data', linesFile, '--method', 'recurrent',
      '--prompts', promptsFile, '--chunk', String(CHUNK), '--concurrency', '1', '--json', json,
    ]);
    expect(r.stderr).not.toMatch(/failed|Stopped/);
    expect(r.code).toBe(0);

    // Item by item, in order: an update request per exact token slice, then the final request.
    const requests = server.chatRequests.filter((q) => q.status === 200);
    let at = 0;
    const items = [...LIST_ITEMS, ...LINE_ITEMS];
    const tokens: number[] = [];
    for (const item of items) {
      const question = pyStrip(item.input);
      const text = pyStrip(item.context);
      const ids = tok.encode(text);
      tokens.push(ids.length);
      const slices = Array.from({ length: Math.ceil(ids.length / CHUNK) }, (_, k) => ids.slice(k * CHUNK, (k + 1) * CHUNK));
      expect(slices.length).toBeGreaterThanOrEqual(3);
      expect(slices.slice(0, -1).every((s) => s.length === CHUNK)).toBe(true);
      let memory = INITIAL_MEMORY;
      const sections: string[] = [];
      for (const slice of slices) {
        const section = tok.decode(slice);
        sections.push(section);
        expect(message(requests[at]!)).toBe(renderTemplate(TEMPLATES.update, { problem: question, memory, section }));
        // The memory is overwritten by the reply exactly as returned (after any </think>, stripped).
        memory = memoryFromReply(replies[at]!, 'verbatim');
        expect(memory).toBe(replies[at]!.includes('</think>') ? replies[at]!.split('</think>').at(-1)!.trim() : replies[at]!);
        at++;
      }
      // Token for token, the chunks are the stripped context.
      expect(sections.join('')).toBe(text);
      expect(message(requests[at]!)).toBe(renderTemplate(TEMPLATES.final, { problem: question, memory }));
      at++;
    }
    expect(at).toBe(requests.length);
    expect(replies.some((reply) => reply.includes('</think>'))).toBe(true);
    // Sampling as the paper's runs: 1,024 tokens per reply, temperature 0.7, top p 0.95, no seed.
    for (const q of requests) {
      expect(q.body).toMatchObject({ model: 'memagent-test', max_tokens: 1024, temperature: 0.7, top_p: 0.95 });
      expect(q.body).not.toHaveProperty('seed');
    }

    const report = JSON.parse(readFileSync(json, 'utf8'));
    expect(Object.keys(report)).toEqual(['method', 'prompts', 'datasets']);
    expect(report.method).toBe('recurrent');
    expect(report.prompts).toEqual({ set: 'stand-in.json', sha256: createHash('sha256').update(readFileSync(promptsFile)).digest('hex') });
    expect(report.datasets.map((d: Record<string, unknown>) => Object.keys(d))).toEqual([
      ['file', 'num_docs', 'tokens', 'metrics', 'samples'],
      ['file', 'num_docs', 'tokens', 'metrics', 'samples'],
    ]);
    const [first, second] = report.datasets;
    expect(first).toMatchObject({ file: 'eval_50.json', num_docs: 50, tokens: Math.round((tokens[0]! + tokens[1]!) / 2) });
    expect(second).toMatchObject({ file: 'eval_200.jsonl', num_docs: 200, tokens: Math.round((tokens[2]! + tokens[3]!) / 2) });
    // The heuristic engine answers with the sentences that hold the answer: each is a substring match.
    for (const d of report.datasets) {
      expect(d.metrics).toEqual({ sub_em: 100, em: 0, f1: expect.any(Number) });
      for (const s of d.samples) {
        expect(Object.keys(s)).toEqual(['index', 'prediction', 'answers', 'sub_em', 'em', 'f1']);
        expect(s).toMatchObject({ sub_em: 1, em: 0 });
        expect(s.prediction).not.toMatch(/the answer is|\.$/);
      }
    }
    expect(first.samples[1]).toMatchObject({ index: 1, answers: ['copper bells', 'bells'] });
    expect(first.samples[1].prediction).toContain('a town famous for its copper bells');

    // Each length beside the paper's RL-MemoryAgent-7B and -14B.
    expect(r.stdout).toMatch(/^file\s+docs\s+length\s+tokens\s+samples\s+sub_em %\s+em %\s+f1 %\s+paper 7B\s+paper 14B$/m);
    expect(r.stdout).toMatch(/^eval_50\.json\s+50\s+7K\s+[\d,]+\s+2\/2\s+100\.00\s+0\.00\s+[\d.]+\s+82\.0\s+83\.6$/m);
    expect(r.stdout).toMatch(/^eval_200\.jsonl\s+200\s+28K\s+[\d,]+\s+2\/2\s+100\.00\s+0\.00\s+[\d.]+\s+78\.9\s+84\.4$/m);
    expect(r.stdout).toContain('method recurrent, chunks of 120 tokens (exact token slices, as the paper cuts)');
  });

  it('leaves an item whose request failed out of the averages, and says so', async () => {
    const json = join(dir, 'failed.json');
    server.fail({ kind: 500 });
    const r = await memagent([
      'eval', '--base-url', server.url, '--data', linesFile, '--prompts', promptsFile, '--chunk', String(CHUNK),
      '--concurrency', '1', '--retries', '0', '--json', json,
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/\[1\/2\] \[eval_200\.jsonl #1\] failed, left out of the averages: .*500/);
    expect(r.stdout).toMatch(/^eval_200\.jsonl\s+200\s+28K\s+[\d,]+\s+1\/2 \(1 failed\)\s+100\.00/m);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    // The method follows the templates: their final prompt asks for "the answer is".
    expect(report.method).toBe('recurrent');
    expect(report.datasets[0].samples.map((s: { index: number }) => s.index)).toEqual([1]);
  });

  it('refuses flags that cannot work, before reading anything', async () => {
    const plan = (extra: Partial<Parameters<typeof planDatasetEval>[0]>) => () => planDatasetEval({ data: [listFile], concurrency: 1, ...extra });
    expect(plan({ method: 'boxed' })).toThrow('--method is recurrent or recurrent-boxed, got "boxed".');
    expect(plan({ data: [join(dir, 'eval_400.json')] })).toThrow(/There is no dataset file .*eval_400\.json/);
    expect(plan({ data: [listFile, listFile] })).toThrow('Two dataset files are named eval_50.json');
    expect(plan({ prompts: listFile })).toThrow('needs "update" and "final"');
    // Without templates of its own, the app's wording asks for \boxed{}, so the method that reads it is the default.
    expect(plan({})().settings.method).toBe('recurrent-boxed');
    // Every file is read through before any model time is spent: a broken one is found at the start.
    const broken = join(dir, 'eval_100.jsonl');
    writeFileSync(broken, `${JSON.stringify(LINE_ITEMS[0])}\n{"context": "Document 1:`);
    const checked = plan({ data: [listFile, broken], samples: 5 })();
    await expect(checkDatasetFiles(checked)).rejects.toThrow('eval_100.jsonl ends in the middle of an item (line 2)');
    const counted = plan({ data: [listFile, linesFile], samples: 1 })();
    await checkDatasetFiles(counted);
    expect(counted.files.map((f) => f.items)).toEqual([1, 1]);
    const mixed = await memagent(['eval', '--base-url', server.url, '--data', listFile, '--tasks', 'vt']);
    expect(mixed).toMatchObject({ code: 2 });
    expect(mixed.stderr).toContain('--tasks is for the generated tasks, not for --data.');
  });
});
