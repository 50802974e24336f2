import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { RUN_ANSWER, type SourcesRecord } from '../src/storage/db';
import { parseExport, toMarkdown } from '../src/storage/export';
import { runExport } from '../src/ui/inspector/run-export';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';

const QUESTION = 'Where was the warden of Gull Rock born?';
const FACT_1 = 'The warden of Gull Rock is Orrin Vale.';
const FACT_2 = 'Orrin Vale was born in Port Meridian, far from the sea.';

let tok: QwenTokenizer;
let bytes: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  const book = corpusText('frankenstein.txt').slice(60_000, 100_000);
  const at = (f: number) => book.indexOf('\n\n', Math.floor(book.length * f));
  const [a, b] = [at(0.2), at(0.75)];
  bytes = new TextEncoder().encode(`${book.slice(0, a)}\n\n${FACT_1}${book.slice(a, b)}\n\n${FACT_2}${book.slice(b)}`);
}, 60_000);

async function finishedRun() {
  const t = await testRunner(new ExtractiveEngine(tok), tok);
  const doc = await t.library.ingest('gull-rock.txt', bytes, 'extractive');
  const runId = await t.runner.start({ documentId: doc.id, question: QUESTION, engineId: 'extractive', chunkTokens: 1000, memoryTokens: 256 });
  await until(async () => (await t.store.getSources(runId, RUN_ANSWER)) !== undefined);
  return { ...t, runId, run: (await t.store.getRun(runId))! };
}

describe("the inspector's exports of a run", () => {
  it('hold the sources of the answer as the page shows them, and the Markdown quotes each cited sentence with its place and revisions', async () => {
    const { store, runner, runId, run } = await finishedRun();
    const shown = (await store.getSources(runId, RUN_ANSWER))!;
    let traced = 0;
    const data = await runExport(run, { store, traceSources: (id) => (traced++, runner.findSources(id)) });
    // Traced already: the export reads what is stored and asks for nothing.
    expect(traced).toBe(0);
    const { runId: _runId, ...exported } = shown;
    expect(data.sources).toEqual([exported]);
    const json = JSON.stringify(data);
    expect(parseExport(json).sources).toEqual([shown]);
    const markdown = toMarkdown(data);
    const total = run.chunks.length;
    for (const fact of [FACT_1, FACT_2]) {
      const c = shown.citations.find((c) => c.sentence?.text === fact)!;
      expect(c, fact).toBeDefined();
      const kept =
        c.revision === c.keptUntil
          ? `written down at revision ${c.revision + 1}`
          : `written down at revision ${c.revision + 1}, kept to revision ${c.keptUntil + 1}`;
      expect(markdown).toContain(`> ${fact}\n\n— ${[c.place, `section ${c.revision + 1} of ${total}`].filter(Boolean).join(' · ')} · ${kept}`);
    }
  });

  it('trace the sources of a finished run that has none stored yet before they are written', async () => {
    const { store, runner, runId, run } = await finishedRun();
    // A run read before sources were kept: storage holds none until the worker traces them.
    let traced = false;
    const view = { ...bound(store), listSources: async (id: string): Promise<SourcesRecord[]> => (traced ? store.listSources(id) : []) };
    const data = await runExport(run, {
      store: view,
      traceSources: async (id) => {
        await runner.findSources(id);
        traced = true;
      },
    });
    expect(traced).toBe(true);
    expect(data.sources?.[0]?.citations.map((c) => c.sentence?.text)).toEqual(expect.arrayContaining([FACT_1, FACT_2]));
    expect(toMarkdown(data)).toContain(`> ${FACT_2}`);
    expect((await store.getRun(runId))!.status).toBe('done');
  });

  it('ask for no tracing for a run that is not finished, and export it without sources', async () => {
    const { store, run } = await finishedRun();
    const paused = { ...run, status: 'paused' as const, answer: undefined };
    const view = { ...bound(store), listSources: async (): Promise<SourcesRecord[]> => [] };
    let asked = false;
    const data = await runExport(paused, { store: view, traceSources: async () => void (asked = true) });
    expect(asked).toBe(false);
    expect(data.sources).toBeUndefined();
  });
});

/** The store's readers an export uses, bound to it, so that one of them can be replaced. */
function bound(store: Awaited<ReturnType<typeof finishedRun>>['store']) {
  return {
    listRevisions: store.listRevisions.bind(store),
    listMemories: store.listMemories.bind(store),
    listFollowUps: store.listFollowUps.bind(store),
    getDocument: store.getDocument.bind(store),
    listSources: store.listSources.bind(store),
  };
}
