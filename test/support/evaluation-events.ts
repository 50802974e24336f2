import type { EvaluationEvent } from '../../src/agent/protocol';

/**
 * What an evaluator publishes, kept in order, and a wait for an evaluation to
 * end (done or failed) that wakes on each event rather than polling.
 */
export function evaluationEvents() {
  const events: EvaluationEvent[] = [];
  let wake = () => undefined as void;
  const publish = (e: EvaluationEvent) => {
    events.push(e);
    wake();
  };
  const finished = (id: string) =>
    new Promise<void>((resolve) => {
      const check = () => events.some((e) => e.type === 'status' && e.evaluationId === id && (e.status === 'done' || e.status === 'failed')) && resolve();
      wake = check;
      check();
    });
  return { events, publish, finished };
}
