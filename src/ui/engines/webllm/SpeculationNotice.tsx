import { useTranslation } from 'react-i18next';
import type { RunRecord } from '../../data';
import { mismatchesFor, speculates } from './speculation';
import { useSpeculationVerdicts } from './verdicts';

/**
 * On a WebLLM run that asked for speculative writing: where the check found
 * the model writing other tokens speculatively than plainly on some device, a
 * notice that speculation is off for it there, so its revisions were written
 * plainly.
 */
export function SpeculationNotice({ run }: { run: Pick<RunRecord, 'id' | 'engineId' | 'engineConfig'> }) {
  const { t } = useTranslation();
  const asked = run.engineId === 'webllm' && speculates(run.engineConfig);
  const verdicts = useSpeculationVerdicts(asked ? run.id : null);
  if (!asked) return null;
  const found = mismatchesFor(verdicts, run.engineConfig);
  if (!found.length) return null;
  return (
    <p role="note" className="warning">
      {found.map((v) => t('runSettings.speculationMismatch', { model: v.modelId, adapter: v.adapter })).join(' ')}
    </p>
  );
}
