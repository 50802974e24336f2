import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { READ_LIMITS } from '../core/plan';
import { DEFAULT_TEMPLATES } from '../core/prompts';
import { effectivePromptSet, PromptSetField, templatesOf, usePromptFiles } from './PromptSetField';
import { ErrorAlert } from './engines/fields';
import { fieldProblem } from './settings';
import { MethodField } from './MethodField';
import { CheckField, NumberField, type Props } from './SettingFields';

function TemplateField(props: { label: string; rows: number; value: string; placeholder?: string; onChange(v: string): void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows}
        spellCheck={false}
        value={props.value}
        placeholder={props.placeholder}
        readOnly={props.placeholder !== undefined}
        onChange={(e) => props.onChange(e.target.value)}
      />
    </div>
  );
}

/** Sizes, skim mode, sampling, the prompt set and its two templates of the next read. */
export function SettingsPanel({ settings, onChange, engineId }: Props & { engineId: string }) {
  const { t } = useTranslation();
  const seedId = useId();
  const seedProblem = fieldProblem(settings, 'seed');
  const field = { settings, onChange };
  const [files, refreshFiles] = usePromptFiles();
  const set = effectivePromptSet(settings, engineId, files);
  const shown = templatesOf(set, settings, files);
  const waiting = shown ? undefined : t('settings.waiting');
  // Editing any set's templates makes them the person's own.
  const edit = (which: 'update' | 'final') => (value: string) =>
    onChange({ promptSet: 'custom', templates: { ...(shown ?? DEFAULT_TEMPLATES), [which]: value } });
  return (
    <section aria-label={t('settings.region')} className="settings">
      <MethodField {...field} engineId={engineId} />
      {/* InfMem fixes its chunk and memory sizes, and chooses what to read itself. */}
      {settings.method !== 'infmem' && (
        <>
          <div className="row">
            <NumberField {...field} name="chunkTokens" label={t('settings.chunk')} {...READ_LIMITS.chunkTokens} />
            <NumberField {...field} name="memoryTokens" label={t('settings.memory')} {...READ_LIMITS.memoryTokens} />
          </div>
          <CheckField label={t('settings.skim')} checked={settings.skim} onChange={(skim) => onChange({ skim })} />
        </>
      )}
      {settings.skim && settings.method !== 'infmem' && (
        <>
          <div className="row">
            <NumberField {...field} name="skimPercent" label={t('settings.skimPercent')} min={1} max={100} whole={false} />
            <CheckField label={t('settings.follow')} checked={settings.skimFollow} onChange={(skimFollow) => onChange({ skimFollow })} />
            {settings.skimFollow && (
              <CheckField label={t('settings.lookBack')} checked={settings.skimLookBack} onChange={(skimLookBack) => onChange({ skimLookBack })} />
            )}
          </div>
          <p className="hint">{t('settings.skimHint')}</p>
        </>
      )}
      <details className="more">
        <summary>{t('settings.more')}</summary>
        <div className="row">
          <NumberField {...field} name="temperature" label={t('settings.temperature')} {...READ_LIMITS.temperature} />
          <NumberField {...field} name="topP" label={t('settings.topP')} {...READ_LIMITS.topP} />
          <div className="field">
            <label htmlFor={seedId}>{t('settings.seed')}</label>
            <input
              id={seedId}
              type="number"
              min={0}
              step={1}
              placeholder={t('settings.random')}
              value={settings.seed ?? ''}
              aria-invalid={seedProblem ? true : undefined}
              aria-describedby={seedProblem ? `${seedId}-error` : undefined}
              onChange={(e) => onChange({ seed: e.target.value === '' ? null : e.target.valueAsNumber })}
            />
            <ErrorAlert message={seedProblem} id={`${seedId}-error`} />
          </div>
        </div>
        <PromptSetField settings={settings} engineId={engineId} files={files} refresh={refreshFiles} onChange={onChange} />
        <TemplateField label={t('settings.updateTemplate')} rows={8} value={shown?.update ?? ''} placeholder={waiting} onChange={edit('update')} />
        <TemplateField label={t('settings.finalTemplate')} rows={6} value={shown?.final ?? ''} placeholder={waiting} onChange={edit('final')} />
        <p className="hint">{t('settings.slots', { open: '{{', close: '}}' })}</p>
        <button type="button" onClick={() => onChange({ promptSet: null, templates: { ...DEFAULT_TEMPLATES } })}>
          {t('settings.reset')}
        </button>
      </details>
    </section>
  );
}
