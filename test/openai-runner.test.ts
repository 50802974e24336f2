import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineConfig } from '../src/engines/engine';
import { createEngine, tokenizerFor } from '../src/engines/registry';
import { wireParts } from './runner-setup';
import { type RunRecord, Store } from '../src/storage/db';
import { buildExport } from '../src/storage/export';
import { corpusText } from './helpers';
import { type OpenAITestServer, startOpenAIServer } from './support/openai-server';

const NEEDLE = 'The vault code for the Marlowe archive is 4829137.';
const QUESTION = 'What is the vault code for the Marlowe archive?';
const KEY = 'sk-runner-secret-9f3a';

let server: OpenAITestServer;
let store: Store;
let bytes: Uint8Array<ArrayBuffer>;

/** A runner as the worker builds one: the key comes from elsewhere at each request, never from the run. */
function parts() {
  return wireParts({
    store,
    createEngine: (id, config) => createEngine(id, config, { apiKey: async () => KEY, retry: { baseDelayMs: 5, maxDelayMs: 20 } }),
    tokenizerFor,
    publish: () => undefined,
  });
}

async function settled(id: string): Promise<RunRecord> {
  for (;;) {
    const run = (await store.getRun(id))!;
    if (run.status !== 'running') return run;
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  server = await startOpenAIServer({ apiKey: KEY });
  store = await Store.open('openai-runner-test');
  const excerpt = corpusText('frankenstein.txt').slice(100_000, 130_000);
  const cut = excerpt.indexOf('. ', 20_000) + 2;
  bytes = new TextEncoder().encode(excerpt.slice(0, cut) + NEEDLE + ' ' + excerpt.slice(cut)) as Uint8Array<ArrayBuffer>;
});

afterAll(async () => {
  store?.close();
  await server?.stop();
});

describe('runs against an OpenAI-compatible server', () => {
  it('store each step’s retries, keep the server but never a key, and resume from the stored config', async () => {
    const doc = await parts().library.ingest('excerpt.txt', bytes, 'openai');
    // A careless caller passes a key in the config: it must not reach the run.
    const config: EngineConfig = { baseUrl: server.url, model: 'memagent-test', apiKey: 'sk-leaked-by-caller' };
    server.fail({ kind: 429, retryAfter: 0 }, { kind: 'drop' });
    const held = server.holdAfterNext(4);
    const first = parts().runner;
    const id = await first.start({ documentId: doc.id, question: QUESTION, engineId: 'openai', engineConfig: config, chunkTokens: 1000, memoryTokens: 256 });
    await held;
    await first.jobs.pause(id);
    server.release();
    expect((await settled(id)).status).toBe('paused');

    // Another runner, as after a reload: it knows the run only from storage.
    await parts().runner.jobs.resume(id);
    const run = await settled(id);
    expect(run.status).toBe('done');
    expect(run.answer).toContain('4829137');
    expect(run.engineConfig).toEqual({ baseUrl: server.url, model: 'memagent-test' });

    const revisions = await store.listRevisions(id);
    expect(revisions.map((r) => r.index)).toEqual(run.chunks.map((_, i) => i));
    expect(revisions[0]!.retries).toBe(2);
    expect(revisions.slice(1).every((r) => r.retries === 0)).toBe(true);
    const exported = JSON.stringify(buildExport({ run, revisions, memories: await store.listMemories(id) }));
    expect(exported).toContain(server.url);
    expect(exported).not.toMatch(/sk-/);
  });
});
