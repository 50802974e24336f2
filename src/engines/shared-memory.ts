/**
 * Whether threads can share memory here: a cross-origin isolated page is not enough, WebKit (Safari's engine
 * on Linux) is isolated yet has no SharedArrayBuffer. Without it llama.cpp runs on one thread.
 */
export function sharedMemory(scope: { crossOriginIsolated?: boolean; SharedArrayBuffer?: unknown } = globalThis): boolean {
  return scope.crossOriginIsolated === true && typeof scope.SharedArrayBuffer === 'function';
}
