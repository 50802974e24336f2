import type { RunRecord } from '../../storage/db';

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
        <dt>Memory size</dt>
        <dd>{s.memoryTokens} tokens</dd>
        <dt>Context per step</dt>
        <dd>{s.contextTokens} tokens</dd>
        <dt>Skim</dt>
        <dd>
          {run.skim
            ? `reads ${run.chunks.length} of ${run.skim.totalChunks} chunks (top ${Math.round(run.skim.keep * 100)}% by relevance and neighbours${run.skim.followMemory ? ', following what the memory finds' : ''})`
            : 'off: every chunk is read'}
        </dd>
        <dt>Sampling</dt>
        <dd>
          temperature {s.temperature}, top p {s.topP}, seed {s.seed ?? 'random'}
        </dd>
      </dl>
      <h4>Memory update template</h4>
      <pre tabIndex={0} className="text">{run.templates.update}</pre>
      <h4>Final answer template</h4>
      <pre tabIndex={0} className="text">{run.templates.final}</pre>
    </details>
  );
}
