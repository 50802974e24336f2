import type { EngineInfo } from '../engine';

export const EXTRACTIVE_INFO: EngineInfo = {
  id: 'extractive',
  label: 'Extractive (no model)',
  description: 'Heuristic memory baseline: keeps the sentences most related to the question, no language model. Instant and deterministic.',
  needsModel: false,
  standaloneTokenizer: true,
};
