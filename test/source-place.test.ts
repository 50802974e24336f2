import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { RUN_ANSWER } from '../src/storage/db';
import { traceRead } from '../src/cli/sources';
import { prose } from './fixtures/documents';
import { testRunner, until } from './runner-setup';

const QUESTION = 'Where was the warden of Gull Rock born?';
const FACT = 'The warden of Gull Rock, Orrin Vale, was born in Port Meridian.';

let tok: QwenTokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
}, 60_000);

// Chapter 2 begins a little way into a section that starts in Chapter 1: the sentence is in Chapter 2.
const text = ['Chapter 1', prose(1, 30), 'Chapter 2', `${prose(2, 2)} ${FACT} ${prose(3, 4)}`, 'Chapter 3', prose(4, 30)].join('\n\n');

describe('the place of a cited sentence', () => {
  it('is the sentence’s own chapter, the same in the app’s worker and in the command line', async () => {
    const t = await testRunner(new ExtractiveEngine(tok), tok);
    const doc = await t.library.ingest('gull-rock.txt', new TextEncoder().encode(text), 'extractive');
    const runId = await t.runner.start({ documentId: doc.id, question: QUESTION, engineId: 'extractive', chunkTokens: 1200, memoryTokens: 256 });
    await until(async () => (await t.store.getSources(runId, RUN_ANSWER)) !== undefined);
    const revisions = await t.store.listRevisions(runId);
    const at = text.indexOf(FACT);
    const section = revisions.find((r) => r.start <= at && at < r.end)!;
    // The section itself starts in Chapter 1 and reaches Chapter 2 (the revision list's "Chapter 1 – Chapter 2").
    expect(section.start).toBeLessThan(text.indexOf('Chapter 2'));
    const app = (await t.store.getSources(runId, RUN_ANSWER))!.citations.find((c) => c.sentence?.text === FACT)!;
    expect(app.place).toBe('Chapter 2');

    const anchors = await t.store.getAnchors(doc.id);
    const memories = await t.store.listMemories(runId);
    // The command line reads the same sections: its journal's chunks.
    const chunks = revisions.map((r) => ({ start: r.start, end: r.end, tokens: 0 }));
    const cli = await traceRead(
      { name: 'gull-rock.txt', hash: doc.id, text, anchors },
      { question: QUESTION, chunks, memories, answer: (await t.store.getRun(runId))!.answer! },
    );
    expect(cli.citations.find((c) => c.sentence?.text === FACT)!.place).toBe(app.place);
  });
});
