import * as Comlink from 'comlink';
import { useEffect, useId, useState } from 'react';
import type { EngineConfig } from '../../engines/engine';
import { DEFAULT_CONTEXT_TOKENS, defaultThreads, MAX_FILE_BYTES_WITHOUT_MEMORY64, SUGGESTED_MODELS } from '../../engines/wllama-models';
import { agent, call } from '../client';
import type { EngineSettingsProps } from './types';
import { saveSpeed, suggestionFor, threadsFor, useMeasuredSpeed } from './wllama-speed';

const KEY = 'memagent-wllama';

function saved(): EngineConfig {
  try {
    return (JSON.parse(localStorage.getItem(KEY) ?? 'null') as EngineConfig | null) ?? { modelUrl: SUGGESTED_MODELS[0]!.url };
  } catch {
    return { modelUrl: SUGGESTED_MODELS[0]!.url };
  }
}

export function formatGB(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${Math.round(bytes / 1e6)} MB`;
}

function without(config: EngineConfig, ...names: string[]): Record<string, string | number | boolean> {
  return Object.fromEntries(Object.entries(config).filter(([k]) => !names.includes(k)));
}

/**
 * The llama.cpp model: a suggested Qwen2.5 GGUF, any GGUF URL, or a file on
 * this device (copied into the browser's private storage, never uploaded);
 * the thread count; and a button that loads the model and measures its speed.
 */
export function WllamaSettings({ config, onChange }: EngineSettingsProps) {
  const ids = { suggested: useId(), url: useId(), file: useId(), threads: useId(), context: useId() };
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const measured = useMeasuredSpeed(config);
  const isolated = globalThis.crossOriginIsolated === true;
  const cores = navigator.hardwareConcurrency || 1;

  // The form starts from what was used last; the read form learns it at once.
  useEffect(() => {
    if (!config.modelUrl && !config.localModel) onChange(saved());
  }, []);

  const update = (next: EngineConfig) => {
    setError(null);
    localStorage.setItem(KEY, JSON.stringify(next));
    onChange(next);
  };

  const pickFiles = async (files: File[]) => {
    setError(null);
    setBusy('Copying the model into this browser… 0%');
    try {
      const stored = await call(
        agent.saveLocalModel(
          files,
          Comlink.proxy((f: number) => setBusy(`Copying the model into this browser… ${Math.floor(f * 100)}%`)),
        ),
      );
      update({ ...without(config, 'modelUrl'), localModel: stored.key, localModelName: stored.name });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  };

  const measure = async () => {
    setError(null);
    setBusy('Loading the model…');
    try {
      const sample = await call(
        agent.measureWllama(
          config,
          Comlink.proxy((p: { stage: string; loaded: number; total: number }) =>
            setBusy(
              p.stage === 'download' && p.total > 0
                ? `Downloading the model… ${Math.floor((100 * p.loaded) / p.total)}% (${formatGB(p.loaded)} of ${formatGB(p.total)})`
                : 'Loading the model and measuring…',
            ),
          ),
        ),
      );
      saveSpeed(config, sample);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  };

  const suggestion = suggestionFor(config);
  const threads = threadsFor(config);
  return (
    <div className="engine-settings">
      <label htmlFor={ids.suggested}>Suggested model</label>
      <select
        id={ids.suggested}
        value={config.localModel ? 'file' : (suggestion?.id ?? '')}
        onChange={(e) => {
          const m = SUGGESTED_MODELS.find((x) => x.id === e.target.value);
          if (m) update({ ...without(config, 'localModel', 'localModelName'), modelUrl: m.url });
        }}
      >
        {SUGGESTED_MODELS.map((m) => (
          <option key={m.id} value={m.id}>
            {`${m.label} — ${formatGB(m.bytes)}${m.parts > 1 ? ` in ${m.parts} parts` : ''}`}
          </option>
        ))}
        <option value="">Another model (enter its URL)</option>
        {config.localModel && <option value="file">A file on this device</option>}
      </select>
      {suggestion && suggestion.bytes > MAX_FILE_BYTES_WITHOUT_MEMORY64 && (
        <p className="hint">Over 2 GB: it needs a browser with WebAssembly memory64 (Chrome, Edge or Firefox), not Safari.</p>
      )}

      <label htmlFor={ids.url}>Model URL</label>
      <input
        id={ids.url}
        type="url"
        placeholder="https://…/model.gguf (for a split model, its first part)"
        value={config.localModel ? '' : String(config.modelUrl ?? '')}
        onChange={(e) => update({ ...without(config, 'localModel', 'localModelName'), modelUrl: e.target.value })}
      />

      <label htmlFor={ids.file}>Model file</label>
      <input
        id={ids.file}
        type="file"
        accept=".gguf"
        multiple
        disabled={busy !== null}
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          e.currentTarget.value = '';
          if (files.length) void pickFiles(files);
        }}
      />
      <p className="hint">
        {config.localModel
          ? `Using ${String(config.localModelName ?? config.localModel)}, copied into this browser's storage. It never leaves this device.`
          : 'A GGUF file (or all parts of a split one) from this device is copied into this browser’s storage; nothing is uploaded.'}
      </p>

      <div className="row">
        <div className="field">
          <label htmlFor={ids.threads}>Threads</label>
          <input
            id={ids.threads}
            type="number"
            min={1}
            disabled={!isolated}
            value={isolated ? String(config.threads ?? defaultThreads(cores)) : '1'}
            onChange={(e) => update({ ...config, threads: e.target.valueAsNumber })}
          />
        </div>
        <div className="field">
          <label htmlFor={ids.context}>Largest context (tokens)</label>
          <input
            id={ids.context}
            type="number"
            min={512}
            value={String(config.contextTokens ?? DEFAULT_CONTEXT_TOKENS)}
            onChange={(e) => update({ ...config, contextTokens: e.target.valueAsNumber })}
          />
        </div>
      </div>
      <p className="hint">
        {isolated
          ? `${threads} of ${cores} logical cores. Each run allocates only the context it plans to use, up to this size and the model's own limit.`
          : 'This page is not cross-origin isolated, so llama.cpp runs on 1 thread.'}
      </p>

      <button type="button" onClick={() => void measure()} disabled={busy !== null || !(config.modelUrl || config.localModel)}>
        Load model and measure speed
      </button>
      {busy && (
        <p role="status" className="status">
          {busy}
        </p>
      )}
      {measured && !busy && (
        <p role="status" className="status">
          Measured here with {measured.threads} thread{measured.threads === 1 ? '' : 's'}: reads {Math.round(measured.prefillTokensPerSecond)} tokens/s,
          writes {measured.decodeTokensPerSecond.toFixed(1)} tokens/s.
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}
