import { useEffect, useId } from 'react';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../../format';
import { i18n } from '../../i18n';
import type { ModelView } from '../../../engines/webllm/manager';
import { formatSize, modelFacts } from './format-model';
import { ErrorAlert } from '../fields';
import type { EngineSettingsProps } from '../types';
import { useGpu, useModels } from './models';
import '../../models.css';

function optionLabel(m: ModelView): string {
  const size = m.downloadBytes !== undefined ? `${m.exactSize ? '' : '~'}${formatSize(m.downloadBytes)}` : i18n.t('webllm.sizeUnknown');
  const state = m.cache.complete ? ` · ${i18n.t('webllm.downloaded')}` : '';
  const vram = m.vramMB !== undefined ? ` · ${i18n.t('webllm.vram', { gb: formatNumber(m.vramMB / 1024, 1) })}` : '';
  return `${m.label} — ${size}${vram}${state}${m.unsupported ? ` (${m.unsupported})` : ''}`;
}

/** The model picker under the Engine combobox, with what this browser's GPU can and cannot do. */
export function WebLLMSettings({ config, onChange }: EngineSettingsProps) {
  const { t } = useTranslation();
  const id = useId();
  const gpu = useGpu();
  const { list, error } = useModels(gpu?.status === 'ok');
  const chosen = list?.models.find((m) => m.id === config.model);
  // A model this GPU cannot run (q4f16_1 without shader-f16) gives way to the default, its q4f32_1 build.
  const fallback = list && (!chosen || chosen.unsupported) ? list.models.find((m) => m.id === list.defaultId) : undefined;

  useEffect(() => {
    if (fallback && fallback.id !== config.model) onChange(fallback.engineConfig);
  }, [fallback, config.model, onChange]);

  if (!gpu) return <p className="hint">{t('models.checking')}</p>;
  if (gpu.status !== 'ok') {
    return (
      <p role="alert" className="error">
        {gpu.message}
      </p>
    );
  }
  const current = chosen && !chosen.unsupported ? chosen : fallback;
  return (
    <div className="engine-settings">
      {gpu.fallback && (
        <div role="status" className="warning">
          <details>
            <summary>{t('webllm.software')}</summary>
            <p>{gpu.message}</p>
          </details>
        </div>
      )}
      <label htmlFor={id}>{t('webllm.model')}</label>
      <select
        id={id}
        value={current?.id ?? ''}
        onChange={(e) => {
          const m = list?.models.find((x) => x.id === e.target.value);
          if (m) onChange(m.engineConfig);
        }}
      >
        {!list && <option value="">{t('webllm.loadingList')}</option>}
        {list?.models.map((m) => (
          <option key={m.id} value={m.id} disabled={Boolean(m.unsupported)}>
            {optionLabel(m)}
          </option>
        ))}
      </select>
      <ErrorAlert message={error} />
      {list?.note && <p className="hint">{list.note}</p>}
      {current && <p className="hint">{modelFacts(current)}</p>}
    </div>
  );
}
