import { type FormEvent, useId, useState } from 'react';
import { DEFAULT_CHUNK_TOKENS, DEFAULT_MEMORY_TOKENS } from '../core/budget';
import type { EngineInfo } from '../engines/engine';
import type { DocumentRecord } from '../storage/db';
import { formatBytes } from './format';

export interface ReadRequest {
  question: string;
  engineId: string;
  chunkTokens: number;
  memoryTokens: number;
}

interface Props {
  engines: readonly EngineInfo[];
  document: DocumentRecord | null;
  busy: boolean;
  onFile(file: File): void;
  onRead(request: ReadRequest): void;
}

/** Everything a read needs: the book, the question, the engine and the two sizes. */
export function ReadForm({ engines, document, busy, onFile, onRead }: Props) {
  const ids = { doc: useId(), question: useId(), engine: useId(), chunk: useId(), memory: useId() };
  const [question, setQuestion] = useState('');
  const [engineId, setEngineId] = useState('');
  const [chunkTokens, setChunkTokens] = useState(DEFAULT_CHUNK_TOKENS);
  const [memoryTokens, setMemoryTokens] = useState(DEFAULT_MEMORY_TOKENS);
  const engine = engines.find((e) => e.id === engineId) ?? engines[0];

  const submit = (e: FormEvent) => {
    e.preventDefault();
    onRead({ question, engineId: engine?.id ?? '', chunkTokens, memoryTokens });
  };

  return (
    <form className="read-form" onSubmit={submit}>
      <div className="field">
        <label htmlFor={ids.doc}>Document</label>
        <input
          id={ids.doc}
          type="file"
          accept=".txt,.md,.markdown,.text,text/plain,text/markdown"
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            if (file) onFile(file);
            e.currentTarget.value = ''; // the same file may be chosen again
          }}
        />
        <p className="hint" aria-live="polite">
          {document
            ? `${document.name} — ${formatBytes(document.bytes)}, ${document.tokens.toLocaleString('en')} tokens`
            : 'Choose or drop a .txt or .md book. It stays on this device.'}
        </p>
      </div>
      <div className="field">
        <label htmlFor={ids.question}>Question</label>
        <textarea id={ids.question} rows={3} value={question} onChange={(e) => setQuestion(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={ids.engine}>Engine</label>
        <select id={ids.engine} value={engine?.id ?? ''} onChange={(e) => setEngineId(e.target.value)}>
          {engines.map((e) => (
            <option key={e.id} value={e.id}>
              {e.label}
            </option>
          ))}
        </select>
        {engine && <p className="hint">{engine.description}</p>}
      </div>
      <div className="row">
        <div className="field">
          <label htmlFor={ids.chunk}>Chunk size (tokens)</label>
          <input
            id={ids.chunk}
            type="number"
            min={100}
            max={100000}
            step={100}
            value={chunkTokens}
            onChange={(e) => setChunkTokens(e.target.valueAsNumber)}
          />
        </div>
        <div className="field">
          <label htmlFor={ids.memory}>Memory size (tokens)</label>
          <input
            id={ids.memory}
            type="number"
            min={64}
            max={8192}
            step={64}
            value={memoryTokens}
            onChange={(e) => setMemoryTokens(e.target.valueAsNumber)}
          />
        </div>
      </div>
      <button type="submit" disabled={busy}>
        Read
      </button>
    </form>
  );
}
