import { Store } from '../../storage/db';

/*
 * The page's only way to what is stored: the readers of the Store, never its
 * writers (every write is asked of the worker, which owns runs and imports),
 * with the record types and the pure helpers of exports. A test checks that no
 * other file of the UI imports storage.
 */

export type * from '../../storage/schema';
export type * from '../../storage/evaluation-schema';
export type * from '../../storage/model-schema';
export { buildExport, checkExportSize, toMarkdown, type RunExport } from '../../storage/export';
export { contentHash, RUN_ANSWER } from '../../storage/schema';
export { loadApiKey } from '../../storage/secrets';

/** What the page may call on the Store: reads, and hearing that the connection is lost. */
export type StoreView = Pick<
  Store,
  | 'onLost'
  | 'getDocument'
  | 'listDocuments'
  | 'readText'
  | 'getText'
  | 'getStripped'
  | 'getAnchors'
  | 'getRun'
  | 'listRuns'
  | 'readingProgress'
  | 'listRevisions'
  | 'listRevisionsFrom'
  | 'getRevision'
  | 'getMemory'
  | 'listMemories'
  | 'searchMemories'
  | 'listFollowUps'
  | 'getSources'
  | 'listSources'
  | 'recentSteps'
  | 'recentReads'
  | 'getEvaluation'
  | 'listEvaluations'
  | 'listEvaluationSamples'
  | 'listDatasetSamples'
  | 'listEvaluationOrdinals'
  | 'getDatasetItem'
  | 'listCustomModels'
  | 'getSpeed'
  | 'listSpeeds'
  | 'getPromptFile'
  | 'listPromptFiles'
  | 'listCollections'
  | 'getCollection'
>;

/** This tab's read-only view of the database, opened once for the whole page. */
export const store: Promise<StoreView> = Store.open();
