/** The test page: the worker's calls, for the test to evaluate in the page. */
import * as Comlink from 'comlink';
import type { KernelsApi } from './kernels.worker';

const worker = new Worker(new URL('./kernels.worker.ts', import.meta.url), { type: 'module' });
(globalThis as unknown as { kernels: Comlink.Remote<KernelsApi> }).kernels = Comlink.wrap<KernelsApi>(worker);
