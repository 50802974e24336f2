/**
 * Ctrl-C during a command's work: SIGINT aborts the work's signal, so that a
 * read stops at the next step with its journal saved, instead of the process
 * dying mid-line; `release` hands SIGINT back once the work is over.
 */
export function abortOnCtrlC(): AbortController & { release(): void } {
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  return Object.assign(stop, { release: () => void process.off('SIGINT', onSigint) });
}
