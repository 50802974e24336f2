import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ModelView } from '../../../engines/webllm/manager';
import { agent, call } from '../../client';
import { modelKey, type SpeculationVerdict } from '../../../core/estimate';
import { cannotRunHere } from './cannot-run';
import { modelFacts } from './format-model';
import { refreshModels, useGpu, useModelProgress, useModels } from './models';
import { describeVerdict } from './speculation';
import { useSpeculationVerdicts } from './verdicts';
import { formatSpeed } from '../../format';
import { refreshStorage } from '../../storage-figure';
import '../../models.css';
import { ProgressBar } from '../../ProgressBar';

type Action = 'downloadModel' | 'loadModel' | 'deleteModel' | 'removeCustomModel';

/** Models for the WebLLM engine: what is downloaded, how big, and the buttons to fetch, load and delete them. */
export function ModelManager() {
  const { t } = useTranslation();
  const gpu = useGpu();
  const usable = gpu?.status === 'ok';
  const { list, error } = useModels(usable);
  const progress = useModelProgress(usable);
  // Read again with every new model list: a load may have checked speculation there.
  const verdicts = useSpeculationVerdicts(list);
  const verdictOf = (m: ModelView) => (usable ? verdicts.find((v) => v.modelId === modelKey(m.engineConfig) && v.adapter === gpu.adapter) : undefined);
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
    <section aria-label={t('models.title')} className="models">
      <h2>WebLLM (WebGPU)</h2>
      {!gpu ? (
        <p className="hint">{t('models.checking')}</p>
      ) : !usable ? (
        <p className="hint">{cannotRunHere(gpu)}</p>
      ) : (
        <p className="hint">
          {t('models.gpu', { adapter: gpu.adapter })}
          {gpu.fallback ? t('models.software') : ''} · {gpu.shaderF16 ? t('models.f16') : t('models.noF16')}
        </p>
      )}
      {progress && progress.state !== 'failed' && (
        <div className="model-progress">
          <ProgressBar label={t('models.download')} value={pct} max={100} text={`${pct}% — ${progress.text}`} />
          <p className="hint" aria-live="polite">
            {t(progress.phase === 'download' ? 'models.downloading' : 'models.loading', { model: label(progress.modelId), pct })} · {progress.text}
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
          {list.models
            .filter((m) => !m.unsupported || m.cache.partial)
            .map((m) => (
              <li key={m.id} aria-label={m.label}>
                <strong>{m.label}</strong>
                <p className="hint">{modelFacts(m)}</p>
                {m.unsupported && <p className="hint">{t('models.unsupported', { why: m.unsupported })}</p>}
                {m.family === 'qwen3' && <p className="hint">{t('models.infmemOnly')}</p>}
                {m.speed ? (
                  <p className="hint">
                    {t('models.measured', { read: formatSpeed(m.speed.prefillTokensPerSecond), write: formatSpeed(m.speed.decodeTokensPerSecond) })}
                  </p>
                ) : (
                  // Load measures right after loading: until it returns, the model is loaded but not yet measured.
                  m.loaded && <p className="hint">{busy === m.id ? t('models.measuring') : t('models.notMeasured')}</p>
                )}
                <VerdictNote verdict={verdictOf(m)?.speculation} />
                <div className="controls">
                  <button
                    type="button"
                    aria-label={t(m.cache.partial && !m.cache.complete ? 'models.resumeOf' : 'models.downloadOf', { model: m.label })}
                    disabled={busy !== null || m.cache.complete || Boolean(m.unsupported)}
                    onClick={() => void act('downloadModel', m)}
                  >
                    {m.cache.partial && !m.cache.complete ? t('models.resume') : t('models.downloadButton')}
                  </button>
                  {progress?.modelId === m.id && progress.phase === 'download' && progress.state === 'working' && (
                    // Received bytes are kept: Download (or a run) resumes where this stops.
                    <button
                      type="button"
                      aria-label={t('models.stopOf', { model: m.label })}
                      onClick={() => void call(agent.stopModelDownload(m.id)).catch((e: Error) => setAlert(e.message))}
                    >
                      {t('models.stop')}
                    </button>
                  )}
                  <button
                    type="button"
                    aria-label={t('models.loadOf', { model: m.label })}
                    disabled={busy !== null || Boolean(m.unsupported)}
                    onClick={() => void act('loadModel', m)}
                  >
                    {t('models.load')}
                  </button>
                  <button
                    type="button"
                    aria-label={t('models.deleteOf', { model: m.label })}
                    disabled={busy !== null || !m.cache.partial}
                    onClick={() => void act('deleteModel', m)}
                  >
                    {t('models.delete')}
                  </button>
                  {m.custom && (
                    <button
                      type="button"
                      aria-label={t('models.removeOf', { model: m.label })}
                      disabled={busy !== null}
                      onClick={() => void act('removeCustomModel', m)}
                    >
                      {t('models.remove')}
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

/** What the speculation check found with a model on this GPU: a mismatch stands out, since speculation is off for it. */
function VerdictNote({ verdict }: { verdict: SpeculationVerdict | undefined }) {
  if (!verdict) return null;
  return verdict.verdict === 'exact' ? (
    <p className="hint">{describeVerdict(verdict)}</p>
  ) : (
    <p role="note" className="warning">
      {describeVerdict(verdict)}
    </p>
  );
}

/** A model converted elsewhere: RL-MemAgent-7B with the Qwen2-7B-Instruct library, or InfMem-4B with the Qwen3-4B one. */
function CustomModelForm({ onSaved, onError }: { onSaved(): void; onError(message: string): void }) {
  const { t } = useTranslation();
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
      <summary>{t('models.custom.title')}</summary>
      <form onSubmit={(e) => void submit(e)}>
        <div className="field">
          <label htmlFor={id.name}>{t('models.custom.name')}</label>
          <input id={id.name} value={name} onChange={(e) => setName(e.target.value)} placeholder="RL-MemAgent-7B-q4f16_1" />
        </div>
        <div className="field">
          <label htmlFor={id.url}>{t('models.custom.url')}</label>
          <input
            id={id.url}
            type="url"
            value={modelUrl}
            onChange={(e) => setModelUrl(e.target.value)}
            placeholder="https://huggingface.co/you/RL-MemAgent-7B-q4f16_1-MLC"
          />
        </div>
        <div className="field">
          <label htmlFor={id.lib}>{t('models.custom.lib')}</label>
          <input
            id={id.lib}
            type="url"
            value={libUrl}
            onChange={(e) => setLibUrl(e.target.value)}
            placeholder="https://…/Qwen2-7B-Instruct-q4f16_1_cs1k-webgpu.wasm"
          />
        </div>
        <div className="field">
          <label htmlFor={id.limit}>{t('models.custom.limit')}</label>
          <input
            id={id.limit}
            type="number"
            min={8192}
            max={1_048_576}
            step={1}
            value={Number.isNaN(limit) ? '' : limit}
            onChange={(e) => setLimit(e.target.valueAsNumber)}
          />
        </div>
        <p className="hint">{t('models.custom.converted')}</p>
        <p className="hint">{t('models.custom.cors')}</p>
        <button type="submit">{t('models.custom.add')}</button>
      </form>
    </details>
  );
}
