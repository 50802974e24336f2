import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryFromReply } from '../src/core/answer';
import { INITIAL_MEMORY, renderTemplate } from '../src/core/prompts';
import { pyStrip } from '../src/core/pytext';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { checkDatasetFiles, planDatasetEval, runDatasetEval } from '../src/cli/eval-data';
import { resolveCliPrompts } from '../src/cli/prompts';
import { createEngine } from '../src/engines/registry';
import { standinSpecs } from './support/prompt-standins';
import { hasPython, runPython } from './support/python';
import { LINE_ITEMS, LIST_ITEMS, STAND_IN_TEMPLATES as TEMPLATES } from './fixtures/hotpotqa';
import { type OpenAITestServer, type RequestRecord, startOpenAIServer } from './support/openai-server';
import { runCli } from './support/cli';

const memagent = (args: string[]) => runCli(args);

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
}, 60_000);

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
      'eval',
      '--base-url',
      server.url,
      '--data',
      listFile,
      '--data',
      linesFile,
      '--method',
      'recurrent',
      '--prompts',
      promptsFile,
      '--chunk',
      String(CHUNK),
      '--concurrency',
      '1',
      '--json',
      json,
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
    // Edited templates: recorded as such (only an official file has a hash to record).
    expect(report.prompts).toEqual({ set: 'custom', sha256: null });
    expect(report.datasets.map((d: Record<string, unknown>) => Object.keys(d))).toEqual([
      ['file', 'num_docs', 'tokens', 'metrics', 'samples'],
      ['file', 'num_docs', 'tokens', 'metrics', 'samples'],
    ]);
    const [first, second] = report.datasets;
    expect(first).toMatchObject({ file: 'eval_50.json', num_docs: 50, tokens: (tokens[0]! + tokens[1]!) / 2 });
    // The mean of the contexts' tokens, unrounded in the file (the printed table rounds it).
    expect(second).toMatchObject({ file: 'eval_200.jsonl', num_docs: 200, tokens: (tokens[2]! + tokens[3]!) / 2 });
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
      'eval',
      '--base-url',
      server.url,
      '--data',
      linesFile,
      '--prompts',
      promptsFile,
      '--chunk',
      String(CHUNK),
      '--concurrency',
      '1',
      '--retries',
      '0',
      '--json',
      json,
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
    // This app's wording asks for \boxed{}, so the method that reads it is its default.
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

/** The official file's way: its constants as Python reads them, filled by str.format, each reply the next memory. */
const PY_REQUESTS = `
import ast, json, sys
given = json.load(sys.stdin)
constants = {}
for node in ast.parse(given['source']).body:
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        constants[node.targets[0].id] = node.value.value
requests = []
for item in given['items']:
    memory = constants['NO_MEMORY']
    for chunk, reply in zip(item['chunks'], item['replies']):
        requests.append(constants['TEMPLATE'].format(prompt=item['input'].strip(), memory=memory, chunk=chunk))
        memory = reply.split('</think>')[-1].strip() if '</think>' in reply else reply
    requests.append(constants['TEMPLATE_FINAL'].format(prompt=item['input'].strip(), memory=memory))
print(json.dumps(requests))
`;

const STANDIN_PATH = fileURLToPath(new URL('./fixtures/prompt-files/recurrent.py', import.meta.url));

/** Final replies in the forms the paper's extraction has rules for, one per item in order. */
const FINALS = [
  '<think>Brellin lies on a lake.</think>\nSo **the answer is** Lake Oster.', // after </think>, `*` removed: "Lake Oster"
  'The answer is copper bells.', // the phrase is case-sensitive: no answer
  'Reading the notes, the answer is the river Aume', // "river aume" holds "aume"
  'the answer is .', // only a period: an empty answer, which the official scorer scores 0
];

describe('memagent eval --data with MemAgent (paper)', () => {
  it("sends what the official recurrent.py sends for the same items, chunks and replies, and scores as the paper's scorer", async () => {
    const specs = await standinSpecs();
    const updates: string[] = [];
    const replies: string[] = [];
    let finals = 0;
    const paper = await startOpenAIServer({
      keepBodies: true,
      reply: (text, messages) => {
        const final = !messages.at(-1)!.content.includes('<section>');
        const reply = final ? FINALS[finals++]! : updates.length % 3 === 1 ? `<think>notes</think>\n ${text} \n` : `  ${text}\n`;
        if (!final) updates.push(reply);
        replies.push(reply);
        return reply;
      },
    });
    try {
      // The stand-in, known by the hash the test passes in, read as --prompts memagent --prompts-file reads it.
      const prompts = await resolveCliPrompts({ prompts: 'memagent', 'prompts-file': STANDIN_PATH }, 'openai', { specs, cacheDir: join(dir, 'paper-cache') });
      const json = join(dir, 'paper.json');
      const plan = planDatasetEval({ data: [listFile, linesFile], prompts, settings: { chunkTokens: CHUNK }, concurrency: 1, json });
      // The paper's set reads by the method recurrent unless told otherwise; the boxed set by recurrent-boxed.
      expect(plan.settings.method).toBe('recurrent');
      const boxed = await resolveCliPrompts(
        { prompts: 'memagent-boxed', 'prompts-file': STANDIN_PATH.replace('recurrent.py', 'recurrent_boxed.py') },
        'openai',
        { specs, cacheDir: join(dir, 'paper-cache') },
      );
      expect(planDatasetEval({ data: [listFile], prompts: boxed, concurrency: 1 }).settings.method).toBe('recurrent-boxed');
      await checkDatasetFiles(plan);
      const engine = await createEngine('openai', { baseUrl: paper.url });
      const written = new Map<string, string>();
      const code = await runDatasetEval(plan, engine, {
        say: () => undefined,
        out: () => undefined,
        write: (path, text) => written.set(path, text),
        describeEngine: 'test server',
      });
      expect(code).toBe(0);

      // The same items, cut into the same exact token slices, with the replies the server gave.
      let at = 0;
      const items = [...LIST_ITEMS, ...LINE_ITEMS].map((item) => {
        const ids = tok.encode(pyStrip(item.context));
        const chunks = Array.from({ length: Math.ceil(ids.length / CHUNK) }, (_, k) => tok.decode(ids.slice(k * CHUNK, (k + 1) * CHUNK)));
        const itemReplies = replies.slice(at, at + chunks.length);
        at += chunks.length + 1;
        return { input: item.input, chunks, replies: itemReplies };
      });
      // Each request one user message, no system message, as the official code sends it.
      const sent = paper.chatBodies.map((b) => {
        const messages = b.messages as { role: string; content: string }[];
        expect(messages.map((m) => m.role)).toEqual(['user']);
        return messages[0]!.content;
      });
      expect(sent).toHaveLength(at);
      if (hasPython) {
        // Byte for byte what Python's TEMPLATE.format / TEMPLATE_FINAL.format give for them.
        expect(sent).toEqual(runPython<string[]>(PY_REQUESTS, { source: readFileSync(STANDIN_PATH, 'utf8'), items }));
      }
      // Without Python: the app's reading of the file, which prompt-files.test.ts compares with Python's.
      let k = 0;
      for (const item of items) {
        let memory = prompts.set.initialMemory;
        for (const [c, chunk] of item.chunks.entries()) {
          expect(sent[k++]).toBe(renderTemplate(prompts.set.templates.update, { problem: pyStrip(item.input), memory, section: chunk }));
          memory = memoryFromReply(item.replies[c]!, 'verbatim');
        }
        expect(sent[k++]).toBe(renderTemplate(prompts.set.templates.final, { problem: pyStrip(item.input), memory }));
      }

      const report = JSON.parse(written.get(json)!);
      expect(report.method).toBe('recurrent');
      expect(report.prompts).toEqual({ set: 'memagent', sha256: specs[0]!.sha256 });
      // Extracted and scored by the paper's rules: no whole-reply fallback, first gold answer, sub_em both ways, f1 unrounded in the file.
      expect(report.datasets.map((d: { samples: unknown[] }) => d.samples)).toEqual([
        [
          { index: 0, prediction: 'Lake Oster', answers: ['Lake Oster'], sub_em: 1, em: 1, f1: 1 },
          { index: 1, prediction: null, answers: ['copper bells', 'bells'], sub_em: 0, em: 0, f1: 0 },
        ],
        [
          { index: 0, prediction: 'the river Aume', answers: ['Aume'], sub_em: 1, em: 0, f1: 2 / 3 },
          { index: 1, prediction: '', answers: ['Essel'], sub_em: 0, em: 0, f1: 0 },
        ],
      ]);
      expect(report.datasets.map((d: { metrics: unknown }) => d.metrics)).toEqual([
        { sub_em: 50, em: 50, f1: 50 },
        { sub_em: 50, em: 0, f1: 33.5 },
      ]);
    } finally {
      await paper.stop();
    }
  });
});
