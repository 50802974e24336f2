import { buildExport, contentHash, RUN_ANSWER, type RunExport, type RunRecord, type StoreView } from '../data';

/** What an export reads: the stored run's parts, and a way to have the worker trace sources not traced yet. */
export interface ExportSource {
  store: Pick<StoreView, 'listRevisions' | 'listMemories' | 'listFollowUps' | 'getDocument' | 'listSources'>;
  /** Traces and stores the sources of the run's answers that have none (as the page does when it shows them). */
  traceSources(runId: string): Promise<void>;
}

/**
 * A run as its exports hold it: every revision with its memory, the follow-up
 * answers, the book's hash, and each answer's sources as the page shows them.
 * A finished run whose answers were not traced yet (one read before sources
 * were kept) is traced first, so that an export never leaves them out.
 */
export async function runExport(run: RunRecord, { store, traceSources }: ExportSource): Promise<RunExport> {
  const [revisions, memories, followUps, doc] = await Promise.all([
    store.listRevisions(run.id),
    store.listMemories(run.id),
    store.listFollowUps(run.id),
    store.getDocument(run.documentId),
  ]);
  let sources = await store.listSources(run.id);
  const answers = run.status === 'done' && run.answer !== undefined ? [RUN_ANSWER, ...followUps.map((f) => f.index)] : [];
  if (answers.some((a) => !sources.some((s) => s.answer === a))) {
    // A trace that fails is shown under the answer already; the export still holds everything else.
    await traceSources(run.id).catch(() => undefined);
    sources = await store.listSources(run.id);
  }
  // The book's hash: another browser that has the same file shows this run's sections in it.
  return buildExport({ run, revisions, memories, followUps, sources, documentSha256: contentHash(doc ?? { id: run.documentId }) });
}
