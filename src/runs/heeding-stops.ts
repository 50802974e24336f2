/**
 * An engine's requests, or InfMem's steps, each after a turn of the worker's
 * event loop. An engine that answers without waiting on anything (the
 * extractive one) would otherwise read a whole sample before a Pause or
 * Cancel from the page is even heard; a message channel's turn is not slowed
 * as nested timers are.
 */
import type { TextGenerator } from '../core/generation';
import type { InfmemSteps } from '../core/infmem/loop';

export function heedingStops(engine: TextGenerator): TextGenerator {
  return {
    generate: async (messages, options) => {
      await nextTask();
      return engine.generate(messages, options);
    },
  };
}

export function heedingSteps(steps: InfmemSteps): InfmemSteps {
  const heed =
    <V, R>(call: (view: V) => Promise<R>) =>
    async (view: V): Promise<R> => {
      await nextTask();
      return call(view);
    };
  return {
    initialMemory: steps.initialMemory,
    plan: heed(steps.plan.bind(steps)),
    write: heed(steps.write.bind(steps)),
    answer: heed(steps.answer.bind(steps)),
  };
}

function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
