/**
 * Writes test/fixtures/memagent-db-v<N>.json: a small database made by this
 * version of the app (N = its schema version), dumped store by store, for the
 * schema-upgrade tests of later versions. It holds a Project Gutenberg book
 * (header and licence kept beside its text) with a finished run and a run
 * paused part-way, a second book, a model added by URL and a measured speed.
 *
 *   npx tsx scripts/dump-db-fixture.ts
 */
import 'fake-indexeddb/auto';
import { writeFileSync } from 'node:fs';
import type { ChatMessage, GenerateOptions, GenerateResult } from '../src/core/generation';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { Library } from '../src/library/library';
import { Runs } from '../src/runs/runs';
import { EngineCache } from '../src/jobs/engines';
import { DB_VERSION, Store } from '../src/storage/db';
import type { RunEvent } from '../src/agent/protocol';
import { dumpDatabase } from '../test/support/db-dump';

const NAME = 'memagent';
const QUESTION = 'What is the vault code for the Marlowe archive?';

/** Prose with curly quotes, accents, an astral character and CJK: everything a text store must keep exactly. */
function body(seed: number): string {
  const sentences = [
    'The archive stood at the end of Quay Street, behind a door that had not been painted since the war.',
    '“Nobody reads the ledgers any more,” said the keeper, and he locked the cabinet with a brass key.',
    'Mrs. Ó Briain kept the café across the road; her naïve nephew swept its floor every morning.',
    'A storm came in from the west 🌊 and the shutters rattled until dawn.',
    'On the shelf lay a letter in another hand: 马洛档案馆的钥匙在灯下。',
    'Evening fell, and the lamps along the harbour were lit one by one.',
  ];
  const out: string[] = [];
  for (let p = 0; p < 6; p++) {
    const para: string[] = [];
    for (let s = 0; s < 5; s++) para.push(sentences[(seed + p * 5 + s) % sentences.length]!);
    out.push(para.join(' '));
  }
  return out.join('\n\n');
}

const GUTENBERG =
  'The Project Gutenberg eBook of The Marlowe Papers\n\nThis eBook is for the use of anyone anywhere.\n\n' +
  '*** START OF THE PROJECT GUTENBERG EBOOK THE MARLOWE PAPERS ***\n\nChapter 1\n\n' +
  `${body(0)}\n\nThe vault code for the Marlowe archive is 4829137.\n\nChapter 2\n\n${body(3)}\n\n` +
  '*** END OF THE PROJECT GUTENBERG EBOOK THE MARLOWE PAPERS ***\n\nSection 1. General Terms of Use of this licence.\n';

/** The extractive engine, except that call `stallAt` never returns: the run can be paused in the middle. */
class StallingEngine implements Engine {
  readonly id = 'extractive';
  readonly contextWindow: number;
  calls = 0;
  stalled: Promise<void>;
  private reached: () => void = () => undefined;

  constructor(
    private readonly inner: ExtractiveEngine,
    private readonly stallAt: number,
  ) {
    this.contextWindow = inner.contextWindow;
    this.stalled = new Promise((resolve) => (this.reached = resolve));
  }

  get tokenizer() {
    return this.inner.tokenizer;
  }

  generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    if (this.calls++ !== this.stallAt) return this.inner.generate(messages, options);
    this.reached();
    return new Promise(() => undefined);
  }
}

const tokenizer = await loadQwenTokenizer();
const store = await Store.open(NAME);
const events: RunEvent[] = [];
let engine: Engine = new ExtractiveEngine(tokenizer);
let ids = 0;
const publish = (e: RunEvent) => events.push(e);
const library = new Library({ store, tokenizerFor: async () => tokenizer, publish });
const runner = new Runs({ store, library, engines: new EngineCache(async () => engine), publish, newId: () => `v${DB_VERSION}-run-${++ids}` });
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
};

const book = await library.ingest('marlowe-papers.txt', new TextEncoder().encode(GUTENBERG), 'extractive');
const other = await library.ingest('harbour.md', new TextEncoder().encode(`# The Harbour\n\n${body(1)}\n`), 'extractive');
const request = { question: QUESTION, engineId: 'extractive', requestedChunkTokens: 100, memoryTokens: 64 };

// Engines are cached per configuration: each run asks for its own.
const done = await runner.start({ ...request, documentId: book.id, engineConfig: { run: 'done' } });
await until(() => events.some((e) => e.type === 'status' && e.runId === done && e.status === 'done'));

const stalling = new StallingEngine(new ExtractiveEngine(tokenizer), 3);
engine = stalling;
const paused = await runner.start({ ...request, documentId: book.id, engineConfig: { run: 'paused' } });
await stalling.stalled;
await runner.jobs.pause(paused);

await store.putCustomModel({
  id: 'custom:RL-MemAgent-7B',
  label: 'RL-MemAgent-7B',
  modelUrl: 'https://huggingface.co/someone/RL-MemAgent-7B-q4f16_1-MLC/resolve/main/',
  libUrl: 'https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/main/Qwen2-7B-Instruct-q4f16_1-ctx4k_cs1k-webgpu.wasm',
  contextLimit: 32768,
  addedAt: 1795952490000,
});
await store.putSpeed({
  modelId: 'custom:RL-MemAgent-7B',
  adapter: 'nvidia ampere',
  prefillTokensPerSecond: 1850,
  decodeTokensPerSecond: 38,
  promptTokens: 1030,
  completionTokens: 48,
  source: 'reported',
  measuredAt: 1795952493000,
});

const run = (await store.getRun(paused))!;
if (run.status !== 'paused' || run.nextChunk !== 3) throw new Error(`the paused run is at ${run.status} ${run.nextChunk}`);
if (!(await store.getRun(done))!.answer) throw new Error('the finished run has no answer');
console.log(`${book.name}: ${book.chars} characters; ${other.name}: ${other.chars}; runs: ${done} (done), ${paused} (paused at 3)`);
store.close();

const dump = await dumpDatabase(NAME);
const out = new URL(`../test/fixtures/memagent-db-v${dump.version}.json`, import.meta.url);
writeFileSync(out, `${JSON.stringify(dump, null, 1)}\n`);
console.log(`wrote ${out.pathname}`);
process.exit(0);
