import { EVALUATION_EVENTS_CHANNEL, type EvaluationEvent } from '../../agent/protocol';

export function onEvaluationEvent(listener: (event: EvaluationEvent) => void): () => void {
  const channel = new BroadcastChannel(EVALUATION_EVENTS_CHANNEL);
  channel.onmessage = (e: MessageEvent<EvaluationEvent>) => listener(e.data);
  return () => channel.close();
}
