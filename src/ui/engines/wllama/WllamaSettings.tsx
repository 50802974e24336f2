import * as Comlink from 'comlink';
import { useEffect, useEffectEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { EngineConfig } from '../../../engines/engine';
import { DEFAULT_CONTEXT_TOKENS, defaultThreads, MAX_FILE_BYTES_WITHOUT_MEMORY64, SUGGESTED_MODELS } from '../../../engines/wllama/models';
import { agent, call } from '../../client';
import { formatNumber } from '../../format';
import { i18n } from '../../i18n';
import { ErrorAlert, keepChoices, loadChoices, NumberField } from '../fields';
import type { EngineSettingsProps } from '../types';
import { speedMeasured, suggestionFor, threadsFor, useMeasuredSpeed } from './speed';
import { sharedMemory } from '../../../engines/shared-memory';
import { ModelStorageKindHint } from './ModelStorageKindHint';

const KEY = 'memagent-wllama';

function saved(): EngineConfig {
  return loadChoices<EngineConfig>(KEY, { modelUrl: SUGGESTED_MODELS[0]!.url });
}

export function formatGB(bytes: number): string {
  return bytes >= 1e9 ? i18n.t('units.gb', { n: formatNumber(bytes / 1e9, 2) }) : i18n.t('units.mb', { n: formatNumber(Math.round(bytes / 1e6)) });
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
  const { t } = useTranslation();
  const ids = { suggested: useId(), url: useId(), file: useId() };
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const measured = useMeasuredSpeed(config);
  const isolated = sharedMemory();
  const cores = navigator.hardwareConcurrency || 1;

  // The form starts from what was used last; the read form learns it at once.
  const start = useEffectEvent(() => {
    if (!config.modelUrl && !config.localModel) onChange(saved());
  });
  useEffect(() => start(), []);

  const update = (next: EngineConfig) => {
    setError(null);
    keepChoices(KEY, next);
    onChange(next);
  };

  const pickFiles = async (files: File[]) => {
    setError(null);
    setBusy(t('wllama.copying', { pct: 0 }));
    try {
      const stored = await call(
        agent.saveLocalModel(
          files,
          Comlink.proxy((f: number) => setBusy(t('wllama.copying', { pct: Math.floor(f * 100) }))),
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
    setBusy(t('wllama.loading'));
    try {
      await call(
        agent.measureWllama(
          config,
          Comlink.proxy((p: { stage: string; loaded: number; total: number }) =>
            setBusy(
              p.stage === 'download' && p.total > 0
                ? t('wllama.downloading', { pct: Math.floor((100 * p.loaded) / p.total), loaded: formatGB(p.loaded), total: formatGB(p.total) })
                : t('wllama.measuring'),
            ),
          ),
        ),
      );
      speedMeasured();
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
      <label htmlFor={ids.suggested}>{t('wllama.suggested')}</label>
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
            {`${m.label} — ${formatGB(m.bytes)}${m.parts > 1 ? ` ${t('wllama.parts', { n: m.parts })}` : ''}`}
          </option>
        ))}
        <option value="">{t('wllama.another')}</option>
        {config.localModel && <option value="file">{t('wllama.aFile')}</option>}
      </select>
      {suggestion && suggestion.bytes > MAX_FILE_BYTES_WITHOUT_MEMORY64 && <p className="hint">{t('wllama.over2')}</p>}

      <label htmlFor={ids.url}>{t('models.custom.url')}</label>
      <input
        id={ids.url}
        type="url"
        placeholder={t('wllama.urlPlaceholder')}
        value={config.localModel ? '' : String(config.modelUrl ?? '')}
        onChange={(e) => update({ ...without(config, 'localModel', 'localModelName'), modelUrl: e.target.value })}
      />

      <label htmlFor={ids.file}>{t('wllama.file')}</label>
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
      <p className="hint">{config.localModel ? t('wllama.using', { name: String(config.localModelName ?? config.localModel) }) : t('wllama.fileHint')}</p>
      <ModelStorageKindHint />

      <div className="row">
        <NumberField
          label={t('wllama.threads')}
          min={1}
          disabled={!isolated}
          value={isolated ? String(config.threads ?? defaultThreads(cores)) : '1'}
          onChange={(_, threads) => update({ ...config, threads })}
        />
        <NumberField
          label={t('wllama.context')}
          min={512}
          value={String(config.contextTokens ?? DEFAULT_CONTEXT_TOKENS)}
          onChange={(_, contextTokens) => update({ ...config, contextTokens })}
        />
      </div>
      <p className="hint">
        {isolated ? t('wllama.cores', { threads, cores }) : globalThis.crossOriginIsolated ? t('wllama.noSharedMemory') : t('wllama.notIsolated')}
      </p>

      <button type="button" onClick={() => void measure()} disabled={busy !== null || !(config.modelUrl || config.localModel)}>
        {t('wllama.measure')}
      </button>
      {busy && (
        <p role="status" className="status">
          {busy}
        </p>
      )}
      {measured && !busy && (
        <p role="status" className="status">
          {t('wllama.measured', {
            count: threads,
            read: Math.round(measured.prefillTokensPerSecond),
            write: formatNumber(measured.decodeTokensPerSecond, 1),
          })}
        </p>
      )}
      <ErrorAlert message={error} />
    </div>
  );
}
