import { useEffect, useState } from 'react';
import type { BatchSize, BatchSizeRequest } from '../../../agent/protocol';
import { agent, call } from '../../client';
import { useModels } from './models';

/** How long a change must settle before the worker is asked again: typing a question asks once. */
const SETTLE_MS = 300;

/**
 * How many of the form's questions the model writes together on this GPU, as
 * the worker works it out for a read of them (AgentApi.batchSize): asked
 * again once a change of questions or sizes settles, and when the model list
 * changes (a download finished). Undefined while WebLLM is not chosen, with
 * one question, before the first answer, or where the worker could not tell.
 */
export function useBatchSize(active: boolean, request: BatchSizeRequest, questions: readonly string[]): BatchSize | undefined {
  const on = active && questions.length > 1;
  // The list the model picker reads: it changes when a model is downloaded or deleted.
  const { list } = useModels(false);
  const model = JSON.stringify([request.engineId, request.engineConfig ?? {}]);
  const asked = JSON.stringify([request, questions]);
  const [answer, setAnswer] = useState<{ model: string; size: BatchSize | undefined }>();

  useEffect(() => {
    if (!on) return;
    let alive = true;
    const [req, qs] = JSON.parse(asked) as [BatchSizeRequest, string[]];
    const timer = setTimeout(() => {
      call(agent.batchSize(req, qs)).then(
        (size) => alive && setAnswer({ model, size }),
        // The general hint stands in: a read on this model says itself what fails.
        () => alive && setAnswer({ model, size: undefined }),
      );
    }, SETTLE_MS);
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [on, asked, model, list]);

  // The size does not depend on how many questions there are, so the last answer stands while the next is asked;
  // one for another model does not.
  return on && answer?.model === model ? answer.size : undefined;
}
