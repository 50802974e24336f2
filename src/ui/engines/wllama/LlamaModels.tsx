import { useCallback, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { StoredModel } from '../../../engines/wllama/files';
import { cpuThreads } from '../../../engines/wllama/models';
import { agent, call } from '../../client';
import { type SpeedRecord, store } from '../../data';
import { formatSpeed } from '../../format';
import { formatStorage, refreshStorage } from '../../storage-figure';
import '../../models.css';
import { ModelStorageKindHint } from './ModelStorageKindHint';

/**
 * The GGUF models kept in this browser for the llama.cpp engine, with their
 * size and Delete. They are chosen, and their speed measured, under Engine on
 * the Read page; one is kept here the first time it loads.
 */
export function LlamaModels({ active }: { active: boolean }) {
  const { t } = useTranslation();
  const headingId = useId();
  const [models, setModels] = useState<StoredModel[] | null>(null);
  const [speeds, setSpeeds] = useState<SpeedRecord[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [alert, setAlert] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      setModels(await call(agent.listLlamaModels()));
      // Measured on this device, with each thread count it was measured with.
      setSpeeds((await (await store).listSpeeds()).filter((s) => cpuThreads(s.adapter) !== undefined));
    } catch (e) {
      setAlert((e as Error).message);
    }
  }, []);

  // Read again whenever the page is shown: a read on the Read page may have downloaded one.
  useEffect(() => {
    // eslint-disable-next-line react-hooks/set-state-in-effect -- refresh sets state only after awaiting the worker, not within the effect (react#34905)
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
      <h2 id={headingId}>{t('engines.wllama.label')}</h2>
      <p className="hint">{t('models.gguf.intro')}</p>
      <ModelStorageKindHint />
      {alert && (
        <p role="alert" className="error">
          {alert}
        </p>
      )}
      {models === null ? (
        <p className="hint">{t('models.gguf.looking')}</p>
      ) : models.length === 0 ? (
        <p className="hint">{t('models.gguf.none')}</p>
      ) : (
        <ul className="model-list">
          {models.map((m) => (
            <li key={m.id} aria-label={m.name}>
              <strong>{m.name}</strong>
              <p className="hint">
                {t('models.gguf.facts', { size: formatStorage(m.bytes), origin: m.origin })}
                {m.complete ? '' : ` · ${t('models.gguf.incomplete')}`}
              </p>
              {speeds
                .filter((s) => s.modelId === m.model)
                .map((s) => (
                  <p key={s.adapter} className="hint">
                    {t('models.gguf.speed', {
                      count: cpuThreads(s.adapter),
                      read: formatSpeed(s.prefillTokensPerSecond),
                      write: formatSpeed(s.decodeTokensPerSecond),
                    })}
                  </p>
                ))}
              <div className="controls">
                <button type="button" aria-label={t('models.deleteOf', { model: m.name })} disabled={busy !== null} onClick={() => void remove(m)}>
                  {t('models.delete')}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
