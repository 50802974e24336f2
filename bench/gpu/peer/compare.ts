/**
 * WebLLM's figures beside llama.cpp's, request by request, with the ratio of
 * each: llama.cpp's speed over WebLLM's, so 2 means llama.cpp is twice as fast
 * and 0.5 half as fast.
 */
import type { PeerFigure, PeerRecord } from './llama-peer';

/** What the comparison needs of a WebLLM request's figures (the bench's prompt and step figures both fit). */
export interface WebLLMFigure {
  promptTokens: number;
  written: number;
  prefillTokensPerSecond?: number | undefined;
  decodeTokensPerSecond?: number | undefined;
  timeToFirstTokenSeconds?: number | undefined;
}

export interface ComparedRequest {
  what: 'prompt' | 'step';
  promptTokens: number;
  written: number;
  webllm: { prefillTokensPerSecond: number | null; decodeTokensPerSecond: number | null; timeToFirstTokenSeconds: number | null };
  llamaCpp: { prefillTokensPerSecond: number; decodeTokensPerSecond: number; timeToFirstTokenSeconds: number };
  /** llama.cpp ÷ WebLLM; null where WebLLM reported no figure. */
  ratio: { prefill: number | null; decode: number | null };
}

export interface PeerComparison {
  webllm: string;
  llamaCpp: string;
  backend: string;
  requests: ComparedRequest[];
}

const ratio = (peer: number, webllm: number | undefined) => (webllm && webllm > 0 && peer > 0 ? Number((peer / webllm).toFixed(2)) : null);

function compareOne(what: ComparedRequest['what'], w: WebLLMFigure, p: PeerFigure): ComparedRequest {
  return {
    what,
    promptTokens: w.promptTokens,
    written: w.written,
    webllm: {
      prefillTokensPerSecond: w.prefillTokensPerSecond ?? null,
      decodeTokensPerSecond: w.decodeTokensPerSecond ?? null,
      timeToFirstTokenSeconds: w.timeToFirstTokenSeconds ?? null,
    },
    llamaCpp: {
      prefillTokensPerSecond: p.prefillTokensPerSecond,
      decodeTokensPerSecond: p.decodeTokensPerSecond,
      timeToFirstTokenSeconds: p.timeToFirstTokenSeconds,
    },
    ratio: { prefill: ratio(p.prefillTokensPerSecond, w.prefillTokensPerSecond), decode: ratio(p.decodeTokensPerSecond, w.decodeTokensPerSecond) },
  };
}

/** Pairs the two engines' figures in order: the prompt series, then the step. */
export function comparePeer(webllm: { version: string; prompts: readonly WebLLMFigure[]; step: WebLLMFigure }, peer: PeerRecord): PeerComparison {
  if (peer.prompts.length !== webllm.prompts.length) throw new Error(`llama.cpp measured ${peer.prompts.length} prompts, WebLLM ${webllm.prompts.length}.`);
  const mismatch = [...webllm.prompts, webllm.step].findIndex((w, i) => {
    const p = i < peer.prompts.length ? peer.prompts[i]! : peer.step;
    return p.promptTokens !== w.promptTokens;
  });
  if (mismatch >= 0) throw new Error('llama.cpp and WebLLM were given prompts of different sizes.');
  return {
    webllm: `WebLLM ${webllm.version}`,
    llamaCpp: peer.runtime,
    backend: peer.backend,
    requests: [...webllm.prompts.map((w, i) => compareOne('prompt', w, peer.prompts[i]!)), compareOne('step', webllm.step, peer.step)],
  };
}

/** The comparison as a table, for the terminal. */
export function describeComparison(c: PeerComparison): string {
  const n = (v: number | null, unit = '') => (v === null ? '—' : `${v.toFixed(2)}${unit}`);
  const x = (v: number | null) => (v === null ? '—' : `×${v.toFixed(2)}`);
  const lines = [
    `Peer: ${c.llamaCpp} (llama.cpp, ${c.backend}) beside ${c.webllm}; tokens/s, and llama.cpp ÷ WebLLM`,
    `  ${'request'.padEnd(26)} ${'prefill WebLLM'.padStart(15)} ${'llama.cpp'.padStart(10)} ${'ratio'.padStart(7)}   ${'decode WebLLM'.padStart(14)} ${'llama.cpp'.padStart(10)} ${'ratio'.padStart(7)}`,
  ];
  for (const r of c.requests) {
    const label = `${r.what === 'step' ? 'one step' : 'prompt'}: ${r.promptTokens} in, ${r.written} out`;
    lines.push(
      `  ${label.padEnd(26)} ${n(r.webllm.prefillTokensPerSecond).padStart(15)} ${n(r.llamaCpp.prefillTokensPerSecond).padStart(10)} ${x(r.ratio.prefill).padStart(7)}   ${n(r.webllm.decodeTokensPerSecond).padStart(14)} ${n(r.llamaCpp.decodeTokensPerSecond).padStart(10)} ${x(r.ratio.decode).padStart(7)}`,
    );
  }
  const step = c.requests.at(-1)!;
  lines.push(`  first token of the step: WebLLM ${n(step.webllm.timeToFirstTokenSeconds, ' s')}, llama.cpp ${n(step.llamaCpp.timeToFirstTokenSeconds, ' s')}`);
  return lines.join('\n');
}
