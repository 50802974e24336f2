import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../../format';
import { i18n } from '../../i18n';
import type { ModelView } from '../../../engines/webllm/manager';
import { formatSize, modelFacts } from './format-model';
import { ErrorAlert, keepChoices, loadChoices } from '../fields';
import type { EngineSettingsProps } from '../types';
import { cannotRunHere } from './cannot-run';
import { useGpu, useModels } from './models';
import { withSpeculation } from './speculation';
import '../../models.css';

function optionLabel(m: ModelView): string {
  const size = m.downloadBytes !== undefined ? `${m.exactSize ? '' : '~'}${formatSize(m.downloadBytes)}` : i18n.t('webllm.sizeUnknown');
  const state = m.cache.complete ? ` · ${i18n.t('webllm.downloaded')}` : '';
  const vram = m.vramMB !== undefined ? ` · ${i18n.t('webllm.vram', { gb: formatNumber(m.vramMB / 1024, 1) })}` : '';
  return `${m.label} — ${size}${vram}${state}${m.unsupported ? ` (${m.unsupported})` : ''}`;
}

/** Where the "Speculative writing" choice is kept between visits: turned off, it stays off. */
const SPECULATE_KEY = 'memagent-webllm-speculate';

/** The model picker under the Engine combobox, with what this browser's GPU can and cannot do, and speculative writing. */
export function WebLLMSettings({ config, onChange }: EngineSettingsProps) {
  const { t } = useTranslation();
  const id = useId();
  const hintId = useId();
  const whyId = useId();
  const [speculate, setSpeculate] = useState(() => loadChoices<boolean>(SPECULATE_KEY, true) !== false);
  const gpu = useGpu();
  const { list, error } = useModels(gpu?.status === 'ok');
  const chosen = list?.models.find((m) => m.id === config.model);
  // A model this GPU cannot run (q4f16_1 without shader-f16) gives way to the default, its q4f32_1 build.
  const fallback = list && (!chosen || chosen.unsupported) ? list.models.find((m) => m.id === list.defaultId) : undefined;

  // One change at a time, so neither undoes the other: the model's own config (or the default's), with the speculation choice.
  useEffect(() => {
    const base = fallback && fallback.id !== config.model ? fallback.engineConfig : config;
    const next = withSpeculation(base, speculate);
    if (base !== config || next.speculate !== config.speculate) onChange(next);
  }, [fallback, config, speculate, onChange]);

  if (!gpu) return <p className="hint">{t('models.checking')}</p>;
  // Without a usable GPU the settings still show, turned off, each saying why: the reason above them.
  const cannot = cannotRunHere(gpu);
  const current = chosen && !chosen.unsupported ? chosen : fallback;
  return (
    <div className="engine-settings">
      {cannot && (
        <p id={whyId} role="alert" className="error">
          {cannot}
        </p>
      )}
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
        disabled={Boolean(cannot)}
        aria-describedby={cannot ? whyId : undefined}
        onChange={(e) => {
          const m = list?.models.find((x) => x.id === e.target.value);
          if (m) onChange(withSpeculation(m.engineConfig, speculate));
        }}
      >
        {!list && <option value="">{t(cannot ? 'webllm.noModel' : 'webllm.loadingList')}</option>}
        {list?.models.map((m) => (
          <option key={m.id} value={m.id} disabled={Boolean(m.unsupported)}>
            {optionLabel(m)}
          </option>
        ))}
      </select>
      <ErrorAlert message={error} />
      {list?.note && <p className="hint">{list.note}</p>}
      {current && <p className="hint">{modelFacts(current)}</p>}
      <label className="check">
        <input
          type="checkbox"
          checked={speculate}
          disabled={Boolean(cannot)}
          aria-describedby={cannot ? `${whyId} ${hintId}` : hintId}
          onChange={(e) => {
            setSpeculate(e.target.checked);
            keepChoices(SPECULATE_KEY, e.target.checked);
            onChange(withSpeculation(config, e.target.checked));
          }}
        />
        {t('webllm.speculate')}
      </label>
      <p id={hintId} className="hint">
        {t('webllm.speculateHint')}
      </p>
    </div>
  );
}
