import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type PromptFileSpec, PromptFileError, sha256Hex } from '../src/core/prompt-sets';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import type { Tokenizer } from '../src/core/tokenizer';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { choosePromptSet, PromptLibrary } from '../src/runs/prompt-files';
import { DB_VERSION, Store } from '../src/storage/db';
import { buildExport, parseExport, type RunExport, toMarkdown } from '../src/storage/export';
import { loadReadSettings } from '../src/ui/settings';
import { STANDIN, STANDIN_BOXED, standinSpecs } from './support/prompt-standins';
import { testRunner, until } from './runner-setup';

let specs: PromptFileSpec[];
let tok: Tokenizer;
beforeAll(async () => {
  specs = await standinSpecs();
  tok = await loadQwenTokenizer();
});

const openStore = () => Store.open(`memagent-prompts-${crypto.randomUUID()}`);

/** A host that serves `files` by URL path and records what was asked; anything else is a 404. */
function host(files: Record<string, Uint8Array>) {
  const asked: string[] = [];
  const fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    asked.push(url.href);
    const body = files[url.pathname.replace(/^\/+/, '')];
    return body ? new Response(body.slice()) : new Response('Not Found', { status: 404 });
  }) as typeof globalThis.fetch;
  return { fetch, asked };
}

const offline = (async () => {
  throw new TypeError('Failed to fetch');
}) as unknown as typeof fetch;

const PAPER = 'taskutils/memory_eval/utils/recurrent.py';
const BOXED = 'taskutils/memory_eval/utils/recurrent_boxed.py';
const PINNED = 'https://raw.githubusercontent.com/BytedTsinghua-SIA/MemAgent/76b7a658988e4ea53d7388a62de6c0ce79084146';

describe('the prompt files in the browser', () => {
  it('fetches the pinned files from the pinned commit, keeps them, and serves them offline after a reload', async () => {
    const store = await openStore();
    const raw = host({
      [`BytedTsinghua-SIA/MemAgent/76b7a658988e4ea53d7388a62de6c0ce79084146/${PAPER}`]: STANDIN,
      [`BytedTsinghua-SIA/MemAgent/76b7a658988e4ea53d7388a62de6c0ce79084146/${BOXED}`]: STANDIN_BOXED,
    });
    const library = new PromptLibrary(store, { specs, fetch: raw.fetch });
    await library.refresh();
    expect(raw.asked.sort()).toEqual([`${PINNED}/${PAPER}`, `${PINNED}/${BOXED}`]);
    expect((await library.status()).map((s) => [s.set, s.have, s.source])).toEqual([
      ['memagent', true, `${PINNED}/${PAPER}`],
      ['memagent-boxed', true, `${PINNED}/${BOXED}`],
    ]);
    // A later page, offline: the kept copies, checked again.
    const later = new PromptLibrary(store, { specs, fetch: offline });
    const { set, record } = await later.resolve('auto', 'webllm');
    expect(set.id).toBe('memagent');
    expect(record).toEqual({
      set: 'memagent',
      label: 'MemAgent (paper)',
      answerStyle: 'recurrent',
      file: { path: PAPER, commit: '76b7a658988e4ea53d7388a62de6c0ce79084146', sha256: specs[0]!.sha256, source: `${PINNED}/${PAPER}` },
    });
    expect(Object.keys(await later.sets()).sort()).toEqual(['memagent', 'memagent-boxed']);
    // A refresh with everything here fetches nothing.
    const quiet = host({});
    await new PromptLibrary(store, { specs, fetch: quiet.fetch }).refresh();
    expect(quiet.asked).toEqual([]);
    store.close();
  });

  it('fetches from a mirror when one is set', async () => {
    const store = await openStore();
    const mirror = host({ [`mirror/${PAPER}`]: STANDIN });
    const library = new PromptLibrary(store, { specs, fetch: mirror.fetch });
    library.setBase('http://127.0.0.1:9999/mirror/');
    expect((await library.resolve('memagent', 'openai')).record.file?.source).toBe(`http://127.0.0.1:9999/mirror/${PAPER}`);
    expect(() => library.setBase('file:///etc')).toThrow(/is not an http/);
    store.close();
  });

  it('refuses a file whose hash is not the pinned one: nothing kept, and the status says why', async () => {
    const store = await openStore();
    const tampered = new TextEncoder().encode(STANDIN.toString('utf8').replace('Stand-in', 'Tampered'));
    const library = new PromptLibrary(store, { specs, fetch: host({ [`mirror/${PAPER}`]: tampered }).fetch });
    library.setBase('http://mirror.test/mirror');
    await library.refresh();
    expect(await store.listPromptFiles()).toEqual([]);
    const [paper] = await library.status();
    expect(paper!.have).toBe(false);
    expect(paper!.error).toBe(
      `recurrent.py was refused: its SHA-256 is ${await sha256Hex(tampered)}, not ${specs[0]!.sha256}, the hash of the file at MemAgent commit 76b7a65. It is another version of the file, or not that file at all; nothing of it was used or kept. Get ${PAPER} from that commit (${PINNED}/${PAPER}).`,
    );
    store.close();
  });

  it('imports a local copy, knowing which file it is by its hash, and refuses anything else whole', async () => {
    const store = await openStore();
    const library = new PromptLibrary(store, { specs, fetch: offline });
    expect(await library.import('recurrent_boxed (1).py', STANDIN_BOXED)).toMatchObject({ id: 'memagent-boxed', answerStyle: 'recurrent-boxed' });
    expect((await library.status()).find((s) => s.set === 'memagent-boxed')).toMatchObject({ have: true, source: 'imported recurrent_boxed (1).py' });
    const refused = await library.import('notes.py', new TextEncoder().encode('TEMPLATE = "x"\n')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PromptFileError);
    expect((refused as Error).message).toMatch(
      /^"notes\.py" was refused: its SHA-256 is [0-9a-f]{64}, which is not that of recurrent\.py \([0-9a-f]{64}\) or recurrent_boxed\.py/,
    );
    expect((await store.listPromptFiles()).map((f) => f.path)).toEqual([BOXED]);
    store.close();
  });

  it('with no set chosen, uses the app’s wording while the file has never been had, and says so', async () => {
    const store = await openStore();
    const library = new PromptLibrary(store, { specs, fetch: offline });
    const fallback = await library.resolve('auto', 'openai');
    expect(fallback.set.id).toBe('app');
    expect(fallback.record.note).toBe(
      `MemAgent (paper) was not used: its prompt file is not in this browser yet. ${PINNED}/${PAPER} could not be fetched (Failed to fetch). ` +
        `This run uses this app's wording. Go online and press "Fetch prompt files" under "Sampling and prompts" on the Read form, set a mirror there, or download ${PINNED}/${PAPER} and add it with "Import prompt file".`,
    );
    // The extractive engine reads no prompts and fetches nothing.
    expect((await library.resolve('auto', 'extractive')).record).toEqual({ set: 'app', label: "This app's wording", answerStyle: 'lenient' });
    // A set asked for by name is never swapped silently: the run is refused with how to get the file.
    await expect(library.resolve('memagent-boxed', 'openai')).rejects.toThrow(
      /MemAgent \(boxed\) needs its prompt file, which this browser does not have yet: .* "Import prompt file"/,
    );
    store.close();
  });

  it('lets the extractive engine, which reads no instructions, read with a MemAgent set chosen and no prompt file, and records that it needed none', async () => {
    const store = await openStore();
    const raw = host({});
    const library = new PromptLibrary(store, { specs, fetch: raw.fetch });
    for (const choice of ['memagent-boxed', 'memagent'] as const) {
      const { set, record } = await library.resolve(choice, 'extractive');
      expect(set.id).toBe('app');
      expect(record.note).toMatch(/^MemAgent \((boxed|paper)\) was not needed: this engine runs no model and reads no instructions/);
      expect((await choosePromptSet(undefined, choice, 'extractive')).set.id).toBe('app');
    }
    expect(raw.asked).toEqual([]);
    store.close();
  });

  it('keeps nothing it cannot check: a kept copy that no longer matches the pins is not used', async () => {
    const store = await openStore();
    await new PromptLibrary(store, { specs, fetch: offline }).import('recurrent.py', STANDIN);
    const realPins = new PromptLibrary(store, { fetch: offline }); // the real hashes: the stand-in is not the official file
    expect((await realPins.resolve('auto', 'webllm')).set.id).toBe('app');
    store.close();
  });
});

describe('runs and their prompt set', () => {
  async function setup() {
    let give!: (s: Store) => void;
    const prompts = new PromptLibrary(new Promise<Store>((r) => (give = r)), { specs, fetch: offline });
    const { library, runner, store } = await testRunner(new ExtractiveEngine(tok), tok, { prompts });
    give(store);
    const doc = await library.ingest('book.txt', new TextEncoder().encode('Alice met Bob at the harbour in 1921.') as Uint8Array<ArrayBuffer>, 'extractive');
    const start = (prompts: 'auto' | 'memagent' | 'custom', templates?: typeof DEFAULT_TEMPLATES) =>
      runner.start({ documentId: doc.id, question: 'Where did Alice meet Bob?', engineId: 'openai', chunkTokens: 1000, memoryTokens: 256, prompts, templates });
    return { prompts, runner, store, start };
  }

  it('a run with no set chosen records that the app’s wording stood in, and then MemAgent (paper) once the file is here', async () => {
    const { prompts, store, start } = await setup();
    const firstId = await start('auto');
    const before = await store.getRun(firstId);
    expect(before!.prompts).toMatchObject({ set: 'app', note: expect.stringMatching(/^MemAgent \(paper\) was not used/) });
    expect(before!.templates).toEqual(DEFAULT_TEMPLATES);
    await until(async () => (await store.getRun(firstId))?.status === 'done');
    await expect(start('memagent')).rejects.toThrow(/MemAgent \(paper\) needs its prompt file/);

    await prompts.import('recurrent.py', STANDIN);
    const id = await start('auto');
    const run = await store.getRun(id);
    expect(run!.prompts).toEqual({
      set: 'memagent',
      label: 'MemAgent (paper)',
      answerStyle: 'recurrent',
      file: { path: PAPER, commit: '76b7a658988e4ea53d7388a62de6c0ce79084146', sha256: specs[0]!.sha256, source: 'imported recurrent.py' },
    });
    expect(run!.templates.update).toMatch(/^Stand-in instruction/);
    expect(run!.memory).toBe('No previous memory');
    await until(async () => (await store.getRun(id))?.status === 'done');
    const done = (await store.getRun(id))!;
    expect(done.status).toBe('done');
    // Exports carry the record, and an import keeps it.
    const exported = JSON.stringify(buildExport({ run: done, revisions: await store.listRevisions(id), memories: await store.listMemories(id) }));
    expect(parseExport(exported).run.prompts).toEqual(run!.prompts);
    expect(toMarkdown(JSON.parse(exported) as RunExport)).toContain(`prompts: MemAgent (paper) (${PAPER} at 76b7a65, SHA-256 ${specs[0]!.sha256})`);
  });

  it("reads a run's answer as its set asks for it: MemAgent (paper) by the phrase, with no whole-reply fallback", async () => {
    let finalReply = '';
    const inner = new ExtractiveEngine(tok);
    // The extractive engine for the memory, a model's habits for the final reply.
    const engine: Engine = {
      id: 'openai',
      tokenizer: inner.tokenizer,
      contextWindow: inner.contextWindow,
      generate: async (messages, options) => {
        const result = await inner.generate(messages, options);
        return messages.at(-1)!.content.includes('<section>') ? result : { ...result, text: finalReply };
      },
    };
    let give!: (s: Store) => void;
    const prompts = new PromptLibrary(new Promise<Store>((r) => (give = r)), { specs, fetch: offline });
    const { library, runner, store } = await testRunner(engine, tok, { prompts });
    give(store);
    await prompts.import('recurrent.py', STANDIN);
    const doc = await library.ingest('book.txt', new TextEncoder().encode('Alice met Bob at the harbour in 1921.') as Uint8Array<ArrayBuffer>, 'extractive');
    const read = async (set: 'memagent' | 'app', reply: string) => {
      finalReply = reply;
      const id = await runner.start({
        documentId: doc.id,
        question: 'Where did Alice meet Bob?',
        engineId: 'openai',
        chunkTokens: 1000,
        memoryTokens: 256,
        prompts: set,
      });
      await until(async () => (await store.getRun(id))?.status === 'done');
      const run = (await store.getRun(id))!;
      return [run.answer, run.reply];
    };
    expect(await read('memagent', '<think>Bob?</think>\nSo **the answer is** the harbour.')).toEqual([
      'the harbour',
      '<think>Bob?</think>\nSo **the answer is** the harbour.',
    ]);
    // Capitalised, the phrase is not the paper's: no answer, and the reply is kept whole for the person to read.
    expect(await read('memagent', 'The answer is the harbour.')).toEqual(['', 'The answer is the harbour.']);
    // This app's wording reads leniently.
    expect(await read('app', 'The answer is the harbour.')).toEqual(['the harbour', 'The answer is the harbour.']);
  });

  it('a run with edited templates records them as such', async () => {
    const { store, start } = await setup();
    const edited = { ...DEFAULT_TEMPLATES, final: DEFAULT_TEMPLATES.final.replace('Using only', 'From') };
    const id = await start('custom', edited);
    const run = await store.getRun(id);
    expect(run!.prompts).toEqual({ set: 'custom', label: 'Edited templates', answerStyle: 'lenient' });
    expect(run!.templates).toEqual(edited);
    await until(async () => (await store.getRun(id))?.status === 'done');
  });
});

describe('the prompt-file store (schema version 6)', () => {
  it('is added to a version 4 database, and to a version 5 one whatever else version 5 added, losing nothing', async () => {
    for (const [version, extra] of [
      [4, []],
      [5, ['textParts']],
    ] as const) {
      const name = `memagent-v${version}-${crypto.randomUUID()}`;
      await new Promise<void>((resolve, reject) => {
        const open = indexedDB.open(name, version);
        open.onupgradeneeded = () => {
          const db = open.result;
          db.createObjectStore('documents', { keyPath: 'id' }).put({ id: 'doc-1', name: 'book.txt' });
          db.createObjectStore('texts', { keyPath: 'id' });
          db.createObjectStore('runs', { keyPath: 'id' }).createIndex('byDocument', 'documentId');
          for (const s of ['revisions', 'memories', 'evaluationSamples'])
            db.createObjectStore(s, { keyPath: s === 'evaluationSamples' ? ['evaluationId', 'ordinal'] : ['runId', 'index'] });
          for (const s of ['evaluations', 'customModels']) db.createObjectStore(s, { keyPath: 'id' });
          db.createObjectStore('calibrations', { keyPath: ['modelId', 'adapter'] });
          db.createObjectStore('runChunks', { keyPath: 'runId' });
          for (const s of extra) db.createObjectStore(s, { keyPath: 'id' }).put({ id: 'kept' });
        };
        open.onsuccess = () => (open.result.close(), resolve());
        open.onerror = () => reject(open.error);
      });
      const store = await Store.open(name);
      expect(await store.getDocument('doc-1')).toEqual({ id: 'doc-1', name: 'book.txt' });
      await store.putPromptFile({
        path: PAPER,
        sha256: specs[0]!.sha256,
        bytes: STANDIN.buffer.slice(STANDIN.byteOffset, STANDIN.byteOffset + STANDIN.length) as ArrayBuffer,
        source: 'imported',
        savedAt: 1,
      });
      expect((await store.listPromptFiles()).map((f) => f.path)).toEqual([PAPER]);
      store.close();
      const info = await new Promise<{ version: number; stores: string[] }>((resolve) => {
        const open = indexedDB.open(name);
        open.onsuccess = () => {
          resolve({ version: open.result.version, stores: [...open.result.objectStoreNames] });
          open.result.close();
        };
      });
      expect(info.version).toBe(DB_VERSION);
      // Version 7's dataset items come with it: each step stands alone.
      expect(info.stores).toEqual(expect.arrayContaining(['promptFiles', 'datasetItems', ...extra]));
    }
  });
});

describe('settings kept from before prompt sets', () => {
  const saved = (templates: typeof DEFAULT_TEMPLATES) => ({ getItem: () => JSON.stringify({ temperature: 0.3, templates }) });

  it('read the old default templates as no choice made, and edited ones as the person’s own', () => {
    const oldDefault = {
      update: DEFAULT_TEMPLATES.update.replace('<problem> \n', '<problem>\n'),
      final: DEFAULT_TEMPLATES.final.replace('<problem> \n', '<problem>\n'),
    };
    expect(oldDefault.update).not.toBe(DEFAULT_TEMPLATES.update);
    expect(loadReadSettings(saved(oldDefault))).toMatchObject({ temperature: 0.3, promptSet: null, templates: DEFAULT_TEMPLATES, promptsBase: '' });
    const edited = { ...oldDefault, final: 'Mine: {problem} {memory}' };
    expect(loadReadSettings(saved(edited))).toMatchObject({ promptSet: 'custom', templates: edited });
    expect(loadReadSettings({ getItem: () => JSON.stringify({ promptSet: 'memagent-boxed' }) }).promptSet).toBe('memagent-boxed');
  });
});
