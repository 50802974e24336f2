import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { abortError, type ChatMessage, type GenerateOptions, type GenerateResult } from '../src/core/generation';
import { answerFromMemory, memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { RunRequest } from '../src/agent/protocol';
import { RequestError } from '../src/jobs/request-error';
import { buildExport, parseExport, toMarkdown } from '../src/storage/export';
import type { FollowUpRecord } from '../src/storage/db';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';
import type { RunEvent } from '../src/agent/protocol';

const NEEDLE = 'The vault code for the Marlowe archive is 4829137.';
const QUESTION = 'What is the vault code for the Marlowe archive?';
const FOLLOW_UP = 'Which code opens the Marlowe archive vault?';

let tok: QwenTokenizer;
let bytes: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  const excerpt = corpusText('frankenstein.txt').slice(80_000, 95_000);
  const cut = excerpt.indexOf('. ', 8_000) + 2;
  bytes = new TextEncoder().encode(excerpt.slice(0, cut) + NEEDLE + ' ' + excerpt.slice(cut));
});

/** The extractive engine, with every request it gets kept, and a switch that makes requests fail or wait. */
class RecordingEngine implements Engine {
  readonly id = 'extractive';
  readonly inner: ExtractiveEngine;
  readonly contextWindow: number;
  readonly calls: { messages: readonly ChatMessage[]; options: Omit<GenerateOptions, 'signal' | 'onToken'> }[] = [];
  failWith: Error | null = null;
  gate: Promise<void> | null = null;

  constructor(readonly tokenizer: QwenTokenizer) {
    this.inner = new ExtractiveEngine(tokenizer);
    this.contextWindow = this.inner.contextWindow;
  }

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    const { signal: _s, onToken: _t, ...rest } = options;
    this.calls.push({ messages, options: rest });
    if (this.gate) {
      // A held step ends when its run is paused, as a model's does.
      const stopped = new Promise<never>((_, reject) => options.signal?.addEventListener('abort', () => reject(abortError())));
      await Promise.race([this.gate, stopped]);
    }
    if (this.failWith) throw this.failWith;
    return this.inner.generate(messages, options);
  }
}

function request(documentId: string, extra: Partial<RunRequest> = {}): RunRequest {
  return { documentId, question: QUESTION, engineId: 'extractive', chunkTokens: 600, memoryTokens: 128, temperature: 0.3, topP: 0.8, seed: 7, ...extra };
}

/** A finished run of the planted book. */
async function finishedRun() {
  const engine = new RecordingEngine(tok);
  const t = await testRunner(engine, tok);
  const doc = await t.library.ingest('book.txt', bytes, 'extractive');
  const runId = await t.runner.start(request(doc.id));
  await until(async () => (await t.store.getRun(runId))?.status === 'done');
  return { ...t, engine, doc, runId, run: (await t.store.getRun(runId))! };
}

describe('the answer step on its own', () => {
  it("sends exactly the loop's final request: the same template, memory, size and sampling", async () => {
    const engine = new RecordingEngine(tok);
    const text = corpusText('frankenstein.txt').slice(0, 4000);
    const input = {
      text,
      chunks: [
        { start: 0, end: 2000, tokens: 0 },
        { start: 2000, end: 4000, tokens: 0 },
      ],
      question: QUESTION,
      generator: engine,
      templates: DEFAULT_TEMPLATES,
      memoryTokens: 96,
      sampling: { temperature: 0.4, topP: 0.9, seed: 3 },
    };
    let memory = '';
    let answer = '';
    for await (const e of memoryLoop(input)) {
      if (e.kind === 'revision') memory = e.memory;
      else answer = e.answer;
    }
    const last = engine.calls.at(-1)!;
    const step = await answerFromMemory({ ...input, memory });
    expect(engine.calls.at(-1)).toEqual(last);
    expect(step.answer).toBe(answer);
  });
});

describe('follow-up questions', () => {
  it('answers from the final memory with the run own settings, stores the answer, then tells every tab', async () => {
    const { store, runner, engine, events, runId, run } = await finishedRun();
    const reads = engine.calls.length;
    let storedWhenHeard: FollowUpRecord[] | null = null;
    const heard = new Promise<void>((resolve) => {
      const original = events.push.bind(events);
      events.push = (...items: RunEvent[]) => {
        for (const e of items) if (e.type === 'followUp') void store.listFollowUps(runId).then((all) => ((storedWhenHeard = all), resolve()));
        return original(...items);
      };
    });

    const record = await runner.askFollowUp(runId, `  ${FOLLOW_UP}  `);
    await heard;

    // One request, no reading: the final prompt over the final memory, with the run's size and sampling.
    expect(engine.calls.length).toBe(reads + 1);
    const call = engine.calls.at(-1)!;
    const direct = new RecordingEngine(tok);
    await answerFromMemory({
      question: FOLLOW_UP,
      memory: run.memory,
      generator: direct,
      templates: run.templates,
      memoryTokens: 128,
      sampling: { temperature: 0.3, topP: 0.8, seed: 7 },
    });
    expect(call).toEqual(direct.calls[0]);
    expect(call.options).toEqual({ maxTokens: 128, temperature: 0.3, topP: 0.8, seed: 7 });

    expect(record).toMatchObject({ runId, index: 0, question: FOLLOW_UP, memoryIndex: run.nextChunk - 1, finishReason: 'stop' });
    expect(record.answer).toContain('4829137');
    expect(storedWhenHeard).toEqual([record]);
    expect(events.filter((e) => e.type === 'followUp')).toEqual([{ type: 'followUp', runId, index: 0 }]);

    const second = await runner.askFollowUp(runId, 'Who wrote the letters?');
    expect(second.index).toBe(1);
    expect((await store.listFollowUps(runId)).map((f) => f.question)).toEqual([FOLLOW_UP, 'Who wrote the letters?']);
    // The run itself is untouched.
    expect(await store.getRun(runId)).toEqual(run);
  });

  it('refuses, storing nothing, an empty question, an unfinished read, a failing engine and a question too long for the context', async () => {
    const { store, runner, engine, doc, runId, run } = await finishedRun();
    await expect(runner.askFollowUp(runId, '   ')).rejects.toThrow(/Type a question first/);

    engine.gate = new Promise(() => undefined); // the next read never gets past its first step
    const reading = await runner.start(request(doc.id));
    await expect(runner.askFollowUp(reading, FOLLOW_UP)).rejects.toThrow(/has not finished/);
    // The engine is busy reading for that run.
    await until(() => engine.calls.length > 0 && engine.gate !== null);
    await expect(runner.askFollowUp(runId, FOLLOW_UP)).rejects.toThrow(`The engine is busy reading for "${QUESTION}"`);
    await runner.jobs.pause(reading);
    engine.gate = null;
    engine.failWith = new Error('The model server did not answer (HTTP 503).');
    // The paused step lets go of the engine at its next await.
    let failure = '';
    await until(async () => {
      failure = await runner.askFollowUp(runId, FOLLOW_UP).then(
        () => 'answered',
        (e: Error) => e.message,
      );
      return !failure.includes('busy');
    }, 200);
    expect(failure).toBe('The answer could not be written, and nothing was stored: The model server did not answer (HTTP 503).');
    engine.failWith = null;

    const long = `${'Which of the many names in this book '.repeat(Math.ceil(run.settings.contextTokens / 6))}?`;
    await expect(runner.askFollowUp(runId, long)).rejects.toThrow(
      /too long for the memory and the \d+-token context this read used: shorten it by about \d+ tokens/,
    );
    await expect(runner.askFollowUp('no-such-run', FOLLOW_UP)).rejects.toBeInstanceOf(RequestError);
    expect(await store.listFollowUps(runId)).toEqual([]);
  });

  it('keeps nothing when the run is deleted while its answer is written, and deleting a run or its book removes its answers', async () => {
    const { store, runner, library, engine, doc, runId } = await finishedRun();
    let open!: () => void;
    engine.gate = new Promise((resolve) => (open = resolve));
    const asking = runner.askFollowUp(runId, FOLLOW_UP);
    await until(() => engine.calls.at(-1)?.messages[0]?.content.includes(FOLLOW_UP) ?? false);
    await store.deleteRun(runId);
    open();
    await expect(asking).rejects.toThrow('The run was deleted while the answer was written: nothing was kept.');
    engine.gate = null;

    const second = await runner.start(request(doc.id));
    await until(async () => (await store.getRun(second))?.status === 'done');
    await runner.askFollowUp(second, FOLLOW_UP);
    await library.deleteDocument(doc.id);
    expect(await store.listFollowUps(second)).toEqual([]);
  });
});

describe('follow-up answers in exports', () => {
  it('travel in the JSON export, are imported back with the run, and appear in the Markdown', async () => {
    const { store, runner, runId, run } = await finishedRun();
    await runner.askFollowUp(runId, FOLLOW_UP);
    const followUps = await store.listFollowUps(runId);
    const data = buildExport({ run, revisions: await store.listRevisions(runId), memories: await store.listMemories(runId), followUps });
    const json = JSON.stringify(data);
    expect(data.followUps).toEqual(followUps.map(({ runId: _, ...f }) => f));

    const md = toMarkdown(data);
    expect(md).toContain('## Follow-up answers');
    expect(md).toContain(`### ${FOLLOW_UP}`);
    expect(md).toContain(`kept for the question "${QUESTION}"`);
    expect(md).toMatch(/\*\*Answer:\*\* .*4829137/);

    // Into another browser: the run comes with its answers, and more can be asked there.
    const other = await testRunner(new RecordingEngine(tok), tok);
    const imported = await other.runner.importRun(json);
    expect(await other.store.listFollowUps(imported)).toEqual(followUps);
    expect((await other.runner.askFollowUp(imported, 'Where is the vault?')).index).toBe(1);
  });

  it('still reads exports without follow-up answers, and refuses answers on an unfinished run or out of order', async () => {
    const { store, runId, run } = await finishedRun();
    const plain = buildExport({ run, revisions: await store.listRevisions(runId), memories: await store.listMemories(runId) });
    expect('followUps' in plain).toBe(false);
    expect(parseExport(JSON.stringify(plain)).followUps).toEqual([]);

    const answer = {
      index: 0,
      question: 'q',
      answer: 'a',
      reply: 'a',
      memoryIndex: 0,
      promptTokens: 1,
      completionTokens: 1,
      finishReason: 'stop',
      ms: 1,
      askedAt: 1,
    };
    const paused = { ...plain, run: { ...plain.run, status: 'paused' }, followUps: [answer] };
    expect(() => parseExport(JSON.stringify(paused))).toThrow(/only a finished run has follow-up answers/);
    const skipped = { ...plain, followUps: [{ ...answer, index: 1 }] };
    expect(() => parseExport(JSON.stringify(skipped))).toThrow(/follow-up answers must be numbered/);
  });
});
