/** Where a request's time went (probe.ts), as lines of the benchmark's table. */
import type { ForwardKernels } from './kernel-clock';
import type { RequestTimes } from './probe';

const ms = (n: number | undefined) => (n === undefined ? '—' : n >= 100 ? n.toFixed(0) : n.toFixed(2));

function top(f: ForwardKernels, n = 3): string {
  return f.kernels
    .slice(0, n)
    .map((k) => `${k.name} ${(k.share * 100).toFixed(0)} %`)
    .join(', ');
}

export function describeTimes(label: string, t: RequestTimes): string[] {
  const pad = ' '.repeat(20);
  const lines = [
    `  ${label.padEnd(17)} first token ${ms(t.firstTokenMs)} ms; decode ${ms(t.decodeStartMs)} ms a token at the start, ${ms(t.decodeEndMs)} at the end (${t.decodeSteps} steps)`,
  ];
  const b = t.breakdown;
  lines.push(
    b.offered
      ? `${pad}WebLLM's breakdown per token (ms): ${Object.entries(b.msPerToken)
          .map(([k, v]) => `${k} ${ms(v)}`)
          .join(', ')}`
      : `${pad}WebLLM's latency breakdown: not offered (${b.note})`,
  );
  const g = t.gpu;
  if (g && !g.offered) lines.push(`${pad}kernel GPU times: not measured (${g.note})`);
  if (g?.decode) {
    const d = g.decode;
    const share = d.wallMs ? ` of the token's ${ms(d.wallMs)} ms (${((d.gpuMs / d.wallMs) * 100).toFixed(0)} % GPU work)` : '';
    lines.push(`${pad}GPU, a decode token at ${d.contextTokens} tokens of context: ${ms(d.gpuMs)} ms${share} in ${d.passes} kernels; most: ${top(d)}`);
  }
  if (g?.prefill) {
    const p = g.prefill;
    lines.push(`${pad}GPU, a prefill chunk of ${p.tokens} tokens: ${ms(p.gpuMs)} ms in ${p.passes} kernels; most: ${top(p)}`);
  }
  return lines;
}
