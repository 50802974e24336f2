/// <reference lib="webworker" />
import { startOnce } from './start-once';

// The worker's entry only starts the services. No chunk ever imports this module: WebKit evaluates a module
// worker's main script again when a chunk it loads imports from it, which would start a second set of services.
startOnce(globalThis, () => import('./agent.worker'));
