import { useCallback, useEffect, useId, useState } from 'react';
import type { StoredModel } from '../engines/wllama-files';
import { agent, call } from './client';
import { formatStorage, refreshStorage } from './storage-figure';
import './models.css';

/**
 * The GGUF models kept in this browser for the llama.cpp engine, with their
 * size and Delete. They are chosen, and their speed measured, under Engine on
 * the Read page; one is kept here the first time it loads.
 */
export function LlamaModels({ active }: { active: boolean }) {
  const headingId = useId();
  const [models, setModels] = useState<StoredModel[] | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [alert, setAlert] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setModels(await call(agent.listLlamaModels()));
    } catch (e) {
      setAlert((e as Error).message);
    }
  }, []);

  // Read again whenever the page is shown: a read on the Read page may have downloaded one.
  useEffect(() => {
    if (active) void refresh();
  }, [active, refresh]);

  const remove = async (m: StoredModel) => {
    setAlert(null);
    setBusy(m.id);
    try {
      await call(agent.deleteLlamaModel(m.id));
    } catch (e) {
      setAlert((e as Error).message);
    } finally {
      setBusy(null);
      await refresh();
      await refreshStorage();
    }
  };

  return (
    <section aria-labelledby={headingId} className="gguf-models">
      <h2 id={headingId}>llama.cpp (CPU, WebAssembly)</h2>
      <p className="hint">
        GGUF models kept in this browser, downloaded from a URL or copied from a file on this device. Choose one, and measure its speed,
        under Engine on the Read page.
      </p>
      {alert && (
        <p role="alert" className="error">
          {alert}
        </p>
      )}
      {models === null ? (
        <p className="hint">Looking for stored models…</p>
      ) : models.length === 0 ? (
        <p className="hint">None yet: a model is kept here the first time llama.cpp loads it.</p>
      ) : (
        <ul className="model-list">
          {models.map((m) => (
            <li key={m.id} aria-label={m.name}>
              <strong>{m.name}</strong>
              <p className="hint">
                {formatStorage(m.bytes)} · from {m.origin}
                {m.complete ? '' : ' · not complete: the next load fetches or copies it again'}
              </p>
              <div className="controls">
                <button type="button" aria-label={`Delete ${m.name}`} disabled={busy !== null} onClick={() => void remove(m)}>
                  Delete
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
