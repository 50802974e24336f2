import { type BatchSender, inFlight, inTurns } from '../core/batch';
import type { Engine } from './engine';

/**
 * How an engine writes one step's requests for several questions: in one
 * batch where it batches itself (several sequences per forward pass), all in
 * flight together on a server (which batches them; at most `limit`, else the
 * engine's own `requestsAtOnce`), else in turns.
 */
export function batchSender(engine: Engine, limit?: number): BatchSender {
  const alone = inTurns(engine);
  // One request is written as a read of one question is: the engine's own single request, as before batching.
  if (engine.generateBatch) return (requests) => (requests.length === 1 ? alone(requests) : engine.generateBatch!(requests));
  return engine.parallel ? inFlight(engine, limit ?? engine.requestsAtOnce) : alone;
}

/** Whether the questions' requests really share forward passes or a server's batch (else they take turns: correct, not faster). */
export function batches(engine: Engine): boolean {
  return !!engine.generateBatch || !!engine.parallel;
}
