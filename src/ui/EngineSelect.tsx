import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import type { EngineInfo } from '../engines/engine';
import { engineText } from './i18n';

interface Props {
  engines: readonly EngineInfo[];
  value: string;
  onChange(engineId: string): void;
}

/** The "Engine" combobox, as the Read and Evaluate forms show it. */
export function EngineSelect({ engines, value, onChange }: Props) {
  const { t } = useTranslation();
  const id = useId();
  return (
    <>
      <label htmlFor={id}>{t('read.engine')}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {engines.map((e) => (
          <option key={e.id} value={e.id}>
            {engineText(e.id, 'label', e.label)}
          </option>
        ))}
      </select>
    </>
  );
}
