import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import type { EvalMethod } from '../../eval/infmem-read';
import { engineUi } from '../engines';
import { InfmemFilesField } from '../InfmemFilesField';
import type { Props as SettingsProps } from '../SettingFields';

/** The reading method's choice, and the methods it asks the worker for. */
export type Reading = 'memagent' | 'infmem' | 'both';
export const READING_METHODS: Readonly<Record<Reading, EvalMethod[]>> = { memagent: ['memagent'], infmem: ['infmem'], both: ['memagent', 'infmem'] };

/** What the fields hold: the method, and InfMem's early stop and thinking. */
export interface ReadingChoice {
  reading: Reading;
  earlyStop: number;
  thinking: boolean;
}

interface Props {
  choice: ReadingChoice;
  onChange(change: Partial<ReadingChoice>): void;
  engineId: string;
  /** The Read form's settings, where the InfMem files' mirrors are kept. */
  files: SettingsProps;
}

/**
 * MemAgent, InfMem or both on the same samples or items; with InfMem its
 * early stop and thinking (as the Read form has them), and for a model
 * InfMem's prompt files, which the evaluation needs before it starts.
 */
export function ReadingMethodFields({ choice, onChange, engineId, files }: Props) {
  const { t } = useTranslation();
  const ids = { reading: useId(), hint: useId(), earlyStop: useId(), thinking: useId(), thinkingHint: useId() };
  const infmem = choice.reading !== 'memagent';
  return (
    <>
      <div className="field">
        <label htmlFor={ids.reading}>{t('evaluate.readingMethod')}</label>
        <select id={ids.reading} aria-describedby={ids.hint} value={choice.reading} onChange={(e) => onChange({ reading: e.target.value as Reading })}>
          <option value="memagent">{t('evaluate.readingMemagent')}</option>
          <option value="infmem">{t('evaluate.readingInfmem')}</option>
          <option value="both">{t('evaluate.readingBoth')}</option>
        </select>
        <p className="hint" id={ids.hint}>
          {t('evaluate.readingHint')}
        </p>
      </div>
      {infmem && (
        <>
          <div className="row">
            <div className="field">
              <label htmlFor={ids.earlyStop}>{t('evaluate.earlyStop')}</label>
              <input id={ids.earlyStop} type="number" min={1} value={choice.earlyStop} onChange={(e) => onChange({ earlyStop: e.target.valueAsNumber })} />
            </div>
            <div className="field check">
              <input
                id={ids.thinking}
                type="checkbox"
                aria-describedby={ids.thinkingHint}
                checked={choice.thinking}
                onChange={(e) => onChange({ thinking: e.target.checked })}
              />
              <label htmlFor={ids.thinking}>{t('evaluate.thinking')}</label>
            </div>
          </div>
          <p className="hint" id={ids.thinkingHint}>
            {t('evaluate.thinkingHint')}
          </p>
          {/* A model reads with InfMem's own prompts: the evaluation is refused at its start without them. */}
          {!engineUi(engineId).noModel && <InfmemFilesField settings={files.settings} onChange={files.onChange} />}
        </>
      )}
    </>
  );
}
