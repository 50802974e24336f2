import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { bookAt } from '../src/core/book-set';
import { BookCollections } from '../src/library/collections';
import { buildExport, parseExport, toMarkdown } from '../src/storage/export';
import type { RunRecord } from '../src/storage/db';
import { bytes, setRequest, threeTexts } from './book-set-fixtures';
import { FakeLocks, freshDbName, killTab, memories, openTab, range, type Tab } from './durability-setup';

let texts: { name: string; text: string }[];
beforeAll(() => {
  texts = threeTexts();
});

async function addBooks(tab: Tab, which = [0, 1, 2]): Promise<string[]> {
  const ids: string[] = [];
  for (const i of which) ids.push((await tab.library.ingest(texts[i]!.name, bytes(texts[i]!.text), 'extractive')).id);
  return ids;
}

const indexes = async (tab: Tab, runId: string) => (await tab.store.listRevisions(runId)).map((r) => r.index);

/** The set read straight through: what every interrupted read must end up equal to. */
async function reference(): Promise<{ run: RunRecord; memories: string[] }> {
  const tab = await openTab(freshDbName('set-ref'));
  const runId = await tab.runner.start(setRequest(await addBooks(tab)));
  await tab.log.status(runId, 'done');
  const result = { run: (await tab.store.getRun(runId))!, memories: await memories(tab.store, runId) };
  tab.store.close();
  return result;
}

describe('a run over a set when its tab dies', () => {
  it("continues in the next tab from the next chunk, at the second book's header and inside it, to the same memories and answer", async () => {
    const ref = await reference();
    const n = ref.run.chunks.length;
    const books = ref.run.books!;
    const boundary = ref.run.chunks.findIndex((c) => c.start === books[1]!.start);
    const inside = boundary + 1;
    expect(bookAt(books, ref.run.chunks[inside]!.start)).toBe(1);
    for (const k of [boundary, inside]) {
      const dbName = freshDbName('set-crash');
      const first = await openTab(dbName, { dieAt: k });
      const runId = await first.runner.start(setRequest(await addBooks(first)));
      await first.engine.dead;
      killTab(first);

      const second = await openTab(dbName);
      const stored = (await second.store.getRun(runId))!;
      expect(stored).toMatchObject({ status: 'running', nextChunk: k, memory: ref.memories[k - 1] });
      expect(await indexes(second, runId)).toEqual(range(k));
      const commit = vi.spyOn(second.store, 'commitRevision');
      await second.runner.jobs.resume(runId);
      await second.log.status(runId, 'done');
      expect(commit.mock.calls.map(([r]) => r.index)).toEqual(range(n).slice(k));
      expect(commit.mock.calls[0]![0].start).toBe(ref.run.chunks[k]!.start);
      expect(await memories(second.store, runId)).toEqual(ref.memories);
      expect(await second.store.getRun(runId)).toMatchObject({ status: 'done', answer: ref.run.answer, chunks: ref.run.chunks });
      second.store.close();
    }
  });

  it('is handed over to the other tab, which reads on from the next chunk of the second book', async () => {
    const ref = await reference();
    const n = ref.run.chunks.length;
    const k = ref.run.chunks.findIndex((c) => c.start === ref.run.books![1]!.start) + 1;
    const dbName = freshDbName('set-tabs');
    const locks = new FakeLocks();
    const channel: Tab[] = [];
    const a = await openTab(dbName, { name: 'a', dieAt: k, locks, channel });
    const b = await openTab(dbName, { name: 'b', locks, channel });
    const commitsB = vi.spyOn(b.store, 'commitRevision');
    const runId = await a.runner.start(setRequest(await addBooks(a)));
    await a.engine.dead;
    expect(locks.holder(`memagent-run-${runId}`)).toBe('a');
    expect(locks.waiting(`memagent-run-${runId}`)).toEqual(['b']);
    killTab(a, locks, channel);
    await b.log.status(runId, 'done');
    expect(commitsB.mock.calls.map(([r]) => r.index)).toEqual(range(n).slice(k));
    expect(await memories(b.store, runId)).toEqual(ref.memories);
    expect(await b.store.getRun(runId)).toMatchObject({ status: 'done', answer: ref.run.answer });
    b.store.close();
  });
});

describe('a finished run over a set', () => {
  it('answers a follow-up question from its final memory, which holds facts of two books', async () => {
    const tab = await openTab(freshDbName('set-follow'));
    const runId = await tab.runner.start(setRequest(await addBooks(tab)));
    await tab.log.status(runId, 'done');
    const answer = await tab.runner.askFollowUp(runId, 'Who is the warden of Gull Rock, and where was that person born?');
    expect(answer.answer).toContain('Orrin Vale');
    expect(answer.answer).toContain('Port Meridian');
    expect(await tab.store.listFollowUps(runId)).toEqual([answer]);
    tab.store.close();
  });

  it('exports with its books, and an import finds each book here by its hash, leaving the missing one unlinked', async () => {
    const from = await openTab(freshDbName('set-export'));
    const runId = await from.runner.start(setRequest(await addBooks(from)));
    await from.log.status(runId, 'done');
    const run = (await from.store.getRun(runId))!;
    const exported = buildExport({ run, revisions: await from.store.listRevisions(runId), memories: await from.store.listMemories(runId) });
    const json = JSON.stringify(exported);
    expect(parseExport(json).run.books).toEqual(run.books);
    // The Markdown names the books in order, and the book of each revision: by the file's name where the title is only that.
    const md = toMarkdown(exported);
    expect(md).toContain('1. harbour.txt\n2. weather.txt\n3. families.txt');
    expect(md).toContain(`## Revision 1 (chunk 1 of ${run.chunks.length} · harbour.txt)`);
    expect(md).toContain(`## Revision ${run.chunks.length} (chunk ${run.chunks.length} of ${run.chunks.length} · families.txt)`);
    from.store.close();

    // Another browser holds the first and third books only.
    const to = await openTab(freshDbName('set-import'));
    const [first, third] = await addBooks(to, [0, 2]);
    const imported = await to.runner.importRun(json);
    const back = (await to.store.getRun(imported))!;
    expect(back.books!.map((b) => b.documentId)).toEqual([first, run.books![1]!.documentId, third]);
    const here = await Promise.all(back.books!.map((b) => to.store.getDocument(b.documentId)));
    expect(here.map((d) => d?.name)).toEqual(['harbour.txt', undefined, 'families.txt']);
    expect(back).toMatchObject({ status: 'done', answer: run.answer, documentId: first });
    expect(await to.store.listRevisions(imported)).toHaveLength(run.chunks.length);
    to.store.close();
  });
});

describe('deleting a book of a set', () => {
  it('deletes the runs that read it, set or not, and takes it out of collections, leaving other books and runs', async () => {
    const tab = await openTab(freshDbName('set-delete'));
    const ids = await addBooks(tab);
    const collections = new BookCollections({ store: tab.store, publish: tab.log.publish });
    const kept = await collections.save('Gull Rock papers', ids);
    const setRun = await tab.runner.start(setRequest(ids));
    const other = await tab.runner.start(setRequest([ids[0]!, ids[2]!]));
    const alone = await tab.runner.start({ ...setRequest([ids[0]!]), documentIds: undefined });
    for (const id of [setRun, other, alone]) await tab.log.status(id, 'done');

    expect(await tab.library.deleteDocument(ids[1]!)).toEqual({ runs: 1 });
    expect(await tab.store.getRun(setRun)).toBeUndefined();
    expect(await tab.store.listRevisions(setRun)).toEqual([]);
    expect((await tab.store.listRuns()).map((r) => r.id).sort()).toEqual([other, alone].sort());
    expect((await tab.store.getCollection(kept.id))!.documentIds).toEqual([ids[0], ids[2]]);
    // The first book's runs, over sets or not, go with it.
    expect(await tab.library.deleteDocument(ids[0]!)).toEqual({ runs: 2 });
    expect(await tab.store.listRuns()).toEqual([]);
    tab.store.close();
  });
});

describe('collections', () => {
  it('keeps a named set of books in order, refuses what cannot be one, and deletes it without its books', async () => {
    const tab = await openTab(freshDbName('collections'));
    const ids = await addBooks(tab);
    const collections = new BookCollections({ store: tab.store, publish: tab.log.publish });
    const saved = await collections.save('  Gull   Rock papers ', [ids[2]!, ids[0]!, ids[1]!]);
    expect(saved).toMatchObject({ name: 'Gull Rock papers', documentIds: [ids[2], ids[0], ids[1]] });
    expect(tab.log.events).toContainEqual({ type: 'collection', collectionId: saved.id });
    await expect(collections.save('gull rock PAPERS', ids)).rejects.toThrow(/named "Gull Rock papers" already/);
    await expect(collections.save('   ', ids)).rejects.toThrow(/Give the collection a name/);
    await expect(collections.save('One', [ids[0]!])).rejects.toThrow(/at least two books/);
    await expect(collections.save('Twice', [ids[0]!, ids[0]!])).rejects.toThrow(/chosen twice/);
    await expect(collections.save('Gone', [ids[0]!, 'no-such-book'])).rejects.toThrow(/no longer stored/);
    // Renamed and reordered in place.
    const changed = await collections.save('Harbour first', ids, saved.id);
    expect(changed).toMatchObject({ id: saved.id, createdAt: saved.createdAt, documentIds: ids });
    expect(await tab.store.listCollections()).toEqual([changed]);

    await collections.delete(saved.id);
    expect(await tab.store.listCollections()).toEqual([]);
    expect((await tab.store.listDocuments()).map((d) => d.id).sort()).toEqual([...ids].sort());
    tab.store.close();
  });
});
