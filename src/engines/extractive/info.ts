import type { EngineInfo } from '../engine';

export const EXTRACTIVE_INFO: EngineInfo = {
  id: 'extractive',
  label: 'Extractive (no model)',
  description: 'Heuristic memory baseline: keeps the sentences most related to the question, no language model. Instant and deterministic.',
  needsModel: false,
  standaloneTokenizer: true,
};

/**
 * The extractive engine's whole answer when no sentence of the memory bears on
 * the question. It is written into runs as the reply, in English as every
 * reply; the page shows it in the reader's language (see answer-text).
 */
export const EXTRACTIVE_NOTHING = 'The memory holds nothing that answers the question.';
