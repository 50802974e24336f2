import * as Comlink from 'comlink';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { EngineInfo } from '../../engines/engine';
import type { EvaluationRequest } from '../../agent/protocol';
import { type DocumentRecord, type EvaluationRecord, store } from '../data';
import { agent, call } from '../client';
import { engineText } from '../i18n';
import { EvaluateForm } from './EvaluateForm';
import { EvaluationList } from './EvaluationList';
import { EvaluationView } from './EvaluationView';
import { onEvaluationEvent } from './events';
import { useEvaluation } from './useEvaluation';
import './evaluate.css';
import { ProgressBar } from '../ProgressBar';
import { StoredView } from '../stored-view';

/** The paper's accuracy-versus-length table, measured on this machine with the engine of your choice. */
export function EvaluatePage() {
  const { t } = useTranslation();
  const [engines, setEngines] = useState<readonly EngineInfo[]>([]);
  const [documents, setDocuments] = useState<DocumentRecord[]>([]);
  const [evaluations, setEvaluations] = useState<EvaluationRecord[]>([]);
  const [currentId, setCurrentId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** Bytes of dataset files read and stored so far, while an evaluation of them is being set up. */
  const [reading, setReading] = useState<{ bytes: number; total: number } | null>(null);
  const view = useEvaluation(currentId);

  const refresh = useCallback(async () => setEvaluations(await (await store).listEvaluations()), []);

  useEffect(() => {
    void agent.engines().then(setEngines);
    void (async () => {
      const s = await store;
      setDocuments(await s.listDocuments());
      const all = await s.listEvaluations();
      setEvaluations(all);
      setCurrentId((current) => current ?? all[0]?.id ?? null);
    })();
    // The list shows each sweep's progress as storage holds it: re-read after every stored sample and status.
    const list = new StoredView(refresh);
    const unsubscribe = onEvaluationEvent((e) => {
      if (e.type === 'status' || e.type === 'sample') list.soon();
    });
    return () => {
      list.close();
      unsubscribe();
    };
  }, [refresh]);

  const start = async (request: EvaluationRequest) => {
    setError(null);
    setBusy(true);
    if (request.dataset) setReading({ bytes: 0, total: request.dataset.files.reduce((n, f) => n + f.size, 0) });
    try {
      const onRead = Comlink.proxy((bytes: number, total: number) => setReading({ bytes, total }));
      const id = await call(agent.startEvaluation(request, onRead));
      setCurrentId(id);
      await refresh();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
      setReading(null);
    }
  };

  const control = (action: 'pauseEvaluation' | 'resumeEvaluation' | 'cancelEvaluation') => async () => {
    if (!currentId) return false;
    try {
      await call(agent[action](currentId));
      return true;
    } catch (e) {
      setError((e as Error).message);
      return false;
    }
  };

  /** Deletes the sweep in view (the page asked first) and shows the newest one left. */
  const remove = async () => {
    if (!currentId) return;
    try {
      await call(agent.deleteEvaluation(currentId));
      const left = await (await store).listEvaluations();
      setEvaluations(left);
      setCurrentId(left[0]?.id ?? null);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const label = (id: string) => {
    const engine = engines.find((e) => e.id === id);
    return engine ? engineText(id, 'label', engine.label) : id;
  };
  return (
    <div className="app">
      <header className="app-head">
        <h1 tabIndex={-1}>{t('evaluate.title')}</h1>
        <p className="hint">{t('evaluate.intro')}</p>
      </header>
      <div className="layout">
        <div className="side">
          <EvaluateForm engines={engines} documents={documents} busy={busy} onStart={(r) => void start(r)} onInvalid={setError} />
          {reading && (
            <div className="progress-row">
              <ProgressBar
                label={t('evaluate.readingFiles')}
                value={reading.bytes}
                max={reading.total}
                text={t('evaluate.pctRead', { pct: Math.round((100 * reading.bytes) / Math.max(1, reading.total)) })}
                fill={reading.bytes / Math.max(1, reading.total)}
              />
              <p className="status" aria-live="polite">
                {t('evaluate.storingFiles')}
              </p>
            </div>
          )}
          {error && (
            <p role="alert" className="error">
              {error}
            </p>
          )}
          <EvaluationList evaluations={evaluations} currentId={currentId} onSelect={setCurrentId} engineLabel={label} />
        </div>
        <div className="main">
          {view.evaluation ? (
            <EvaluationView
              evaluation={view.evaluation}
              samples={view.samples}
              items={view.items}
              step={view.step}
              engineLabel={label(view.evaluation.engineId)}
              onPause={control('pauseEvaluation')}
              onResume={control('resumeEvaluation')}
              onCancel={control('cancelEvaluation')}
              onDelete={() => void remove()}
            />
          ) : (
            <p className="empty">{t('evaluate.empty')}</p>
          )}
        </div>
      </div>
    </div>
  );
}
