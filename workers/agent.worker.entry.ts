/// <reference lib="webworker" />
import { startOnce } from './start-once';

// The worker's entry only starts the services. No chunk ever imports this module: WebKit evaluates a module
// worker's main script again when a chunk it loads imports from it, which would start a second set of services.

// The page asks at once, before the services module has loaded and exposed its API: keep those messages and
// hand them on once it listens, or the first calls would never be answered.
const early: MessageEvent[] = [];
const keep = (e: MessageEvent) => early.push(e);
addEventListener('message', keep);

const started = startOnce(globalThis, async () => {
  await import('./agent.worker');
  removeEventListener('message', keep);
  for (const e of early.splice(0)) dispatchEvent(new MessageEvent('message', { data: e.data, ports: [...e.ports] }));
});
// A second evaluation starts nothing, so it keeps nothing either: the first one's services answer.
if (!started) removeEventListener('message', keep);
