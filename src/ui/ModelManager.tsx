import { type FormEvent, useId, useState } from 'react';
import type { ModelView } from '../runner/models';
import { agent, call } from './client';
import { modelFacts } from './engines/format-model';
import { refreshModels, useGpu, useModelProgress, useModels } from './engines/models';
import { formatSpeed } from './format';
import { refreshStorage } from './storage-figure';
import './models.css';

type Action = 'downloadModel' | 'loadModel' | 'deleteModel' | 'removeCustomModel';

/** Models for the WebLLM engine: what is downloaded, how big, and the buttons to fetch, load and delete them. */
export function ModelManager() {
  const gpu = useGpu();
  const usable = gpu?.status === 'ok';
  const { list, error } = useModels(usable);
  const progress = useModelProgress(usable);
  const [busy, setBusy] = useState<string | null>(null);
  const [alert, setAlert] = useState<string | null>(null);

  const act = async (action: Action, m: ModelView) => {
    setAlert(null);
    setBusy(m.id);
    try {
      await call<unknown>(agent[action](m.id));
    } catch (e) {
      setAlert((e as Error).message);
    } finally {
      setBusy(null);
      await refreshModels();
      await refreshStorage();
    }
  };

  const label = (id: string) => list?.models.find((m) => m.id === id)?.label ?? id;
  const pct = progress ? Math.round(100 * progress.fraction) : 0;

  return (
    <section aria-label="Models" className="models">
      <h2>WebLLM (WebGPU)</h2>
      {!gpu ? (
        <p className="hint">Checking WebGPU…</p>
      ) : !usable ? (
        <p className="hint">No WebGPU in this browser: models cannot run here, so none are offered for download.</p>
      ) : (
        <p className="hint">
          GPU: {gpu.adapter}
          {gpu.fallback ? ' (software, very slow)' : ''} · {gpu.shaderF16 ? 'shader-f16 available' : 'no shader-f16: q4f32_1 builds are used'}
        </p>
      )}
      {progress && progress.state !== 'failed' && (
        <div className="model-progress">
          <div
            role="progressbar"
            aria-label="Model download"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={pct}
            aria-valuetext={`${pct}% — ${progress.text}`}
            className="progress"
          >
            <div className="progress-fill" style={{ width: `${pct}%` }} />
          </div>
          <p className="hint" aria-live="polite">
            {progress.phase === 'download' ? 'Downloading' : 'Loading'} {label(progress.modelId)}: {pct}% · {progress.text}
          </p>
        </div>
      )}
      {(alert || error) && (
        <p role="alert" className="error">
          {alert ?? error}
        </p>
      )}
      {usable && list && (
        <ul className="model-list">
          {/* A build this GPU cannot run is listed only while it has files to delete. */}
          {list.models.filter((m) => !m.unsupported || m.cache.partial).map((m) => (
            <li key={m.id} aria-label={m.label}>
              <strong>{m.label}</strong>
              <p className="hint">{modelFacts(m)}</p>
              {m.unsupported && <p className="hint">Not on this GPU: {m.unsupported}.</p>}
              {m.speed ? (
                <p className="hint">
                  Measured on this GPU: {formatSpeed(m.speed.prefillTokensPerSecond)} tokens/s reading, {formatSpeed(m.speed.decodeTokensPerSecond)} tokens/s writing
                </p>
              ) : (
                // Load measures right after loading: until it returns, the model is loaded but not yet measured.
                m.loaded && <p className="hint">{busy === m.id ? 'Measuring its speed on this GPU…' : 'Speed on this GPU: not measured'}</p>
              )}
              <div className="controls">
                <button
                  type="button"
                  aria-label={`${m.cache.partial && !m.cache.complete ? 'Resume download' : 'Download'} ${m.label}`}
                  disabled={busy !== null || m.cache.complete || Boolean(m.unsupported)}
                  onClick={() => void act('downloadModel', m)}
                >
                  {m.cache.partial && !m.cache.complete ? 'Resume download' : 'Download'}
                </button>
                {progress?.modelId === m.id && progress.phase === 'download' && progress.state === 'working' && (
                  // Received bytes are kept: Download (or a run) resumes where this stops.
                  <button type="button" aria-label={`Stop download ${m.label}`} onClick={() => void call(agent.stopModelDownload(m.id)).catch((e: Error) => setAlert(e.message))}>
                    Stop download
                  </button>
                )}
                <button type="button" aria-label={`Load ${m.label}`} disabled={busy !== null || Boolean(m.unsupported)} onClick={() => void act('loadModel', m)}>
                  Load
                </button>
                <button
                  type="button"
                  aria-label={`Delete ${m.label}`}
                  disabled={busy !== null || !m.cache.partial}
                  onClick={() => void act('deleteModel', m)}
                >
                  Delete
                </button>
                {m.custom && (
                  <button type="button" aria-label={`Remove ${m.label}`} disabled={busy !== null} onClick={() => void act('removeCustomModel', m)}>
                    Remove
                  </button>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
      {usable && <CustomModelForm onSaved={() => void refreshModels()} onError={setAlert} />}
    </section>
  );
}

/** A model converted elsewhere, e.g. RL-MemAgent-7B in q4f16_1 with the Qwen2-7B-Instruct library. */
function CustomModelForm({ onSaved, onError }: { onSaved(): void; onError(message: string): void }) {
  const id = { name: useId(), url: useId(), lib: useId(), limit: useId() };
  const [name, setName] = useState('');
  const [modelUrl, setModelUrl] = useState('');
  const [libUrl, setLibUrl] = useState('');
  const [limit, setLimit] = useState(32768);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      await call(agent.saveCustomModel({ label: name, modelUrl, libUrl, contextLimit: limit }));
      setName('');
      setModelUrl('');
      setLibUrl('');
      onSaved();
    } catch (err) {
      onError((err as Error).message);
    }
  };

  return (
    <details className="custom-model">
      <summary>Add a model by URL</summary>
      <form onSubmit={(e) => void submit(e)}>
        <div className="field">
          <label htmlFor={id.name}>Model name</label>
          <input id={id.name} value={name} onChange={(e) => setName(e.target.value)} placeholder="RL-MemAgent-7B-q4f16_1" />
        </div>
        <div className="field">
          <label htmlFor={id.url}>Model URL</label>
          <input id={id.url} type="url" value={modelUrl} onChange={(e) => setModelUrl(e.target.value)} placeholder="https://huggingface.co/you/RL-MemAgent-7B-q4f16_1-MLC" />
        </div>
        <div className="field">
          <label htmlFor={id.lib}>Model library URL</label>
          <input id={id.lib} type="url" value={libUrl} onChange={(e) => setLibUrl(e.target.value)} placeholder="https://…/Qwen2-7B-Instruct-q4f16_1_cs1k-webgpu.wasm" />
        </div>
        <div className="field">
          <label htmlFor={id.limit}>Context limit (tokens)</label>
          <input id={id.limit} type="number" min={8192} step={1024} value={Number.isNaN(limit) ? '' : limit} onChange={(e) => setLimit(e.target.valueAsNumber)} />
        </div>
        <p className="hint">The files of an MLC conversion (mlc-chat-config.json, tokenizer.json, tensor-cache.json and its shards) must be served with CORS headers.</p>
        <button type="submit">Add model</button>
      </form>
    </details>
  );
}
