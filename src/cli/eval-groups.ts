/**
 * The batch an evaluation's samples share on an engine that writes several
 * sequences in one pass (WebLLM): generated samples and dataset items alike.
 */
import { type BatchMember, StepBatcher } from '../core/batch';
import type { TextGenerator } from '../core/generation';
import type { Engine } from '../engines/engine';
import { sampleGroup, togetherOf } from '../engines/sample-groups';

/** The readers' shared batch: each reader joins it once and reads its samples through its member. */
export interface SampleSteps {
  /** How many samples are read together: one reader each. */
  size: number;
  join(limit: number): BatchMember;
}

/**
 * The batch for steps of `stepTokens` (chunk, memory, prompt and reply), said
 * once with its reason; undefined where samples are read without one (an
 * engine that does not batch, or a batch of one).
 */
export async function sampleSteps(engine: Engine, stepTokens: number, say: (line: string) => void): Promise<SampleSteps | undefined> {
  const group = await sampleGroup(engine, stepTokens);
  if (group.reason) say(`${group.size === 1 ? 'Samples are read one at a time' : `At most ${group.size} samples are read together`}: ${group.reason}`);
  const together = togetherOf(engine, group);
  if (!together) return undefined;
  const batcher = new StepBatcher(together.send, together.size);
  return { size: together.size, join: (limit) => batcher.join(limit) };
}

/**
 * Runs the readers and waits for them all: as many as the batch holds, each
 * through its own member of it (left when the reader ends, so it holds the
 * others up no more), or else `count` readers with the engine itself.
 */
export async function runReaders(
  engine: Engine,
  steps: SampleSteps | undefined,
  count: number,
  reader: (generator: TextGenerator) => Promise<void>,
): Promise<void> {
  const one = async () => {
    const member = steps?.join(steps.size);
    try {
      await reader(member ?? engine);
    } finally {
      member?.leave();
    }
  };
  await Promise.all(Array.from({ length: steps?.size ?? count }, one));
}
