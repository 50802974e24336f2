/** A measured step: how long one memory update took and how long its prompt was. */
export interface StepSample {
  ms: number;
  promptTokens: number;
}

export interface RunEstimate {
  chunks: number;
  msPerChunk: number;
  totalMs: number;
}

/**
 * Expected time of a run from this engine's measured steps: the median time
 * per prompt token, times the prompt this run's steps will have. Null without
 * measurements: no number is better than an invented one.
 */
export function estimateRun(chunks: number, promptTokensPerStep: number, samples: readonly StepSample[]): RunEstimate | null {
  const rates = samples.filter((s) => s.promptTokens > 0 && s.ms >= 0).map((s) => s.ms / s.promptTokens).sort((a, b) => a - b);
  if (rates.length === 0 || chunks <= 0) return null;
  const msPerChunk = rates[Math.floor(rates.length / 2)]! * promptTokensPerStep;
  // One more step writes the answer.
  return { chunks, msPerChunk, totalMs: msPerChunk * (chunks + 1) };
}

/** Chunks a skim reads at most: the top share and a neighbour on each side of each. */
export function skimmedChunks(chunks: number, keep: number, neighbours: number): number {
  return Math.min(chunks, Math.max(1, Math.ceil(chunks * keep)) * (1 + 2 * neighbours));
}
