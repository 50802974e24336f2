import { readSettings, readSettingsProblem } from '../core/plan';
import { APP_PROMPT_SET, isFileSet } from '../core/prompt-sets';
import { BudgetError } from '../core/budget';
import type { EngineConfig } from '../engines/engine';
import { WEBLLM_INFO } from '../engines/webllm/models/models';
import type { EngineCache } from '../jobs/engines';
import { RequestError } from '../jobs/request-error';
import type { BatchSize, BatchSizeRequest } from '../agent/protocol';
import { planSettings, promptChoice } from './plan';
import type { PromptLibrary } from './prompt-files';

export interface BatchSizeDeps {
  /** The engines runs read with: the one made here is the one the read then uses. */
  engines: Pick<EngineCache, 'open'>;
  /** What the WebLLM model a config names lacks before its engine can be made from this device's files alone (see ModelService.lacks). */
  lacks(config?: EngineConfig): Promise<'gpu' | 'download' | null>;
  /** The prompt files this browser holds; without them, this app's wording. */
  prompts?: Pick<PromptLibrary, 'sets'>;
}

/**
 * How many of `questions` one batch holds on this device, and why: the
 * engine's own batchLimit at the context a read of them would plan (the
 * form's chunk and memory sizes, the prompt set's update template, the
 * longest question), so the form says what the read will do. Only WebLLM
 * batches on this device; its engine is made from the downloaded files, its
 * weights left off the GPU. Undefined for another engine, or for settings a
 * read would refuse (Read then says why).
 */
export async function batchSize(deps: BatchSizeDeps, request: BatchSizeRequest, questions: readonly string[]): Promise<BatchSize | undefined> {
  if (request.engineId !== WEBLLM_INFO.id) return undefined;
  const asked = readSettings(request);
  if (readSettingsProblem(asked)) return undefined;
  // Nothing is downloaded to answer: the size waits for the model, as a read would.
  const lacking = await deps.lacks(request.engineConfig);
  if (lacking) return { waitsFor: lacking };
  const engine = await deps.engines.open(request.engineId, request.engineConfig);
  if (!engine.batchLimit) return undefined;
  let contextTokens: number;
  try {
    contextTokens = planSettings(asked, engine, await heldUpdateTemplate(deps.prompts, request), questions).contextTokens;
  } catch (e) {
    // No room for a chunk beside the question and memory: Read refuses the read and says so.
    if (e instanceof RequestError || e instanceof BudgetError) return undefined;
    throw e;
  }
  return engine.batchLimit(contextTokens);
}

/**
 * The update template a read would use, from the sets this browser holds: the
 * hint fetches nothing (a read fetches a missing prompt file, or says why not).
 */
async function heldUpdateTemplate(prompts: BatchSizeDeps['prompts'], request: BatchSizeRequest): Promise<string> {
  const choice = promptChoice(request);
  if (choice === 'custom') return (request.templates ?? APP_PROMPT_SET.templates).update;
  // Nothing chosen: MemAgent (paper) for a model, once its file is here.
  const wanted = choice === 'auto' ? 'memagent' : isFileSet(choice) ? choice : undefined;
  const held = wanted ? (await prompts?.sets())?.[wanted] : undefined;
  return (held ?? APP_PROMPT_SET).templates.update;
}
