/** How the tokens of one memory-update step are shared out. */
export interface BudgetInput {
  /** Tokens the engine can hold in one request, prompt and reply together. */
  contextWindow: number;
  /** Tokens of the update template with every slot empty. */
  templateTokens: number;
  questionTokens: number;
  /** Memory cap M: the longest memory the prompt carries. */
  memoryTokens: number;
  /** Reply cap; a reply becomes the next memory, so it defaults to M. */
  outputTokens?: number;
  /** Chunk size the person asked for; the paper's 5000 by default. */
  requestedChunkTokens?: number;
}

export interface Budget {
  chunkTokens: number;
  memoryTokens: number;
  outputTokens: number;
  /** Context the plan needs: what an engine with a configurable window should allocate. */
  contextTokens: number;
}

export const DEFAULT_CHUNK_TOKENS = 5000;
export const DEFAULT_MEMORY_TOKENS = 1024;
export const MIN_CHUNK_TOKENS = 500;

export class BudgetError extends Error {
  override name = 'BudgetError';
}

/** The largest chunk that fits beside the template, question, memory and reply. */
export function planBudget(input: BudgetInput): Budget {
  const memoryTokens = input.memoryTokens;
  const outputTokens = input.outputTokens ?? memoryTokens;
  const requested = input.requestedChunkTokens ?? DEFAULT_CHUNK_TOKENS;
  if (!(memoryTokens >= 1)) throw new BudgetError(`The memory size must be at least 1 token (got ${memoryTokens}).`);
  if (!(requested >= 1)) throw new BudgetError(`The chunk size must be at least 1 token (got ${requested}).`);
  const fixed = input.templateTokens + input.questionTokens + memoryTokens + outputTokens;
  const room = input.contextWindow - fixed;
  if (room < MIN_CHUNK_TOKENS) {
    throw new BudgetError(
      `The question is ${input.questionTokens} tokens long. With a ${memoryTokens}-token memory it leaves room for ` +
        `only ${Math.max(0, room)} tokens of the book per step in a ${input.contextWindow}-token context, and at least ` +
        `${MIN_CHUNK_TOKENS} are needed. Shorten the question or choose a smaller memory size.`,
    );
  }
  const chunkTokens = Math.min(requested, room);
  return { chunkTokens, memoryTokens, outputTokens, contextTokens: fixed + chunkTokens };
}
