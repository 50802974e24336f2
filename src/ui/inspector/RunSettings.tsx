import type { PromptRecord } from '../../core/prompt-sets';
import { CUTTER_LABELS } from '../../core/token-slices';
import type { RunRecord } from '../../storage/db';

/** How a skim chose its chunks, with how many the memory's names added. */
function describeSkim(run: RunRecord): string {
  const skim = run.skim!;
  const count = (by: string) => run.chunks.filter((c) => c.reason?.by === by).length;
  // Runs stored before reasons were kept cannot say how many were followed.
  const counted = run.chunks.some((c) => c.reason)
    ? `: ${count('followed')} followed${skim.lookBack ? `, ${count('looked-back')} looked back` : ''}`
    : '';
  const follow = skim.followMemory ? `, following what the memory finds${skim.lookBack ? ' and looking back' : ''}${counted}` : '';
  return `reads ${run.chunks.length} of ${skim.totalChunks} chunks (top ${Math.round(skim.keep * 100)}% by relevance and neighbours${follow})`;
}

/** The set, and for MemAgent's the file, commit and hash it was read from. */
function describePrompts(p: PromptRecord): string {
  if (!p.file) return p.label;
  const from = p.file.source ? (p.file.source.startsWith('imported') ? `, ${p.file.source}` : `, fetched from ${p.file.source}`) : '';
  return `${p.label}: ${p.file.path} at commit ${p.file.commit.slice(0, 7)}, SHA-256 ${p.file.sha256}${from}`;
}

/** The exact settings and templates a run used. */
export function RunSettings({ run }: { run: RunRecord }) {
  const s = run.settings;
  return (
    <details className="run-settings">
      <summary>Run settings</summary>
      <dl>
        <dt>Engine</dt>
        <dd>
          {run.engineId}
          {typeof run.engineConfig?.model === 'string' ? ` · model ${run.engineConfig.model}` : ''}
        </dd>
        <dt>Chunk size</dt>
        <dd>
          {s.chunkTokens} tokens{s.chunkTokens !== s.requestedChunkTokens ? ` (asked for ${s.requestedChunkTokens}; the context window allows ${s.chunkTokens})` : ''}
        </dd>
        <dt>Chunks</dt>
        <dd>{CUTTER_LABELS.boundary}</dd>
        <dt>Memory size</dt>
        <dd>{s.memoryTokens} tokens</dd>
        <dt>Context per step</dt>
        <dd>{s.contextTokens} tokens</dd>
        <dt>Skim</dt>
        <dd>
          {run.skim ? describeSkim(run) : 'off: every chunk is read'}
        </dd>
        <dt>Sampling</dt>
        <dd>
          temperature {s.temperature}, top p {s.topP}, seed {s.seed ?? 'random'}
        </dd>
        <dt>Prompts</dt>
        <dd>
          {run.prompts ? describePrompts(run.prompts) : 'the templates below (run from before prompt sets)'}
          {run.prompts?.note && <p className="hint">{run.prompts.note}</p>}
        </dd>
      </dl>
      <h4>Memory update template</h4>
      <pre tabIndex={0} className="text">{run.templates.update}</pre>
      <h4>Final answer template</h4>
      <pre tabIndex={0} className="text">{run.templates.final}</pre>
    </details>
  );
}
