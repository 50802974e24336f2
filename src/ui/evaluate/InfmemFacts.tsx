import { useTranslation } from 'react-i18next';
import type { EvaluationRecord } from '../data';
import { InfmemModelNotice } from '../InfmemModelNotice';

/** How InfMem read an evaluation: its early stop, thinking and sampling, and with a model its chat text and prompt files. */
export function InfmemFacts({ evaluation, earlyStop, thinking }: { evaluation: EvaluationRecord; earlyStop: number; thinking: boolean }) {
  const { t } = useTranslation();
  return (
    <>
      <p className="hint">
        {t('evaluate.infmemFacts', { votes: earlyStop, thinking: t(thinking ? 'infmem.thinkingOn' : 'infmem.thinkingOff') })}{' '}
        {evaluation.engineId === 'extractive' && t('evaluate.infmemStandins')}
      </p>
      <InfmemModelNotice run={evaluation} />
    </>
  );
}
