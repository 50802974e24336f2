import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { MAX_EARLY_STOP } from '../core/plan';
import { CheckField, NumberField, type Props } from './SettingFields';
import { engineUi } from './engines';
import { InfmemFilesField } from './InfmemFilesField';

/** How the book is read: MemAgent's loop, or InfMem's, with its early stop and thinking. */
export function MethodField({ settings, onChange, engineId }: Props & { engineId: string }) {
  const { t } = useTranslation();
  const id = useId();
  const infmem = settings.method === 'infmem';
  return (
    <>
      <div className="field">
        <label htmlFor={id}>{t('infmem.method')}</label>
        <select id={id} value={settings.method} onChange={(e) => onChange({ method: e.target.value === 'infmem' ? 'infmem' : 'memagent' })}>
          <option value="memagent">{t('infmem.memagent')}</option>
          <option value="infmem">{t('infmem.infmem')}</option>
        </select>
      </div>
      {infmem && (
        <>
          <div className="row">
            <NumberField settings={settings} onChange={onChange} name="earlyStop" label={t('infmem.earlyStop')} min={1} max={MAX_EARLY_STOP} whole />
            <CheckField label={t('infmem.thinking')} checked={settings.thinking} onChange={(thinking) => onChange({ thinking })} />
          </div>
          <p className="hint">{t('infmem.hint')}</p>
          {/* A model reads with InfMem's own prompts; the extractive engine needs none. */}
          {!engineUi(engineId).noModel && <InfmemFilesField settings={settings} onChange={onChange} />}
        </>
      )}
    </>
  );
}
