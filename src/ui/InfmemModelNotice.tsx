import { useTranslation } from 'react-i18next';
import type { RunRecord } from './data';

/**
 * What an InfMem read with a model did with its requests: the chat text the
 * app rendered them in and where its two prompt files came from, and, where a
 * server has no raw completions, that they went to its chat endpoint instead.
 */
export function InfmemModelNotice({ run }: { run: Pick<RunRecord, 'infmemModel'> }) {
  const { t } = useTranslation();
  const model = run.infmemModel;
  if (!model) return null;
  return (
    <>
      <p className="hint">
        {t('infmemFiles.runRequests', { family: model.family === 'qwen3' ? 'Qwen3' : 'Qwen2.5', infmem: model.files.infmem, fncall: model.files.fncall })}
      </p>
      {model.endpoint === 'chat' && (
        <p role="note" className="warning">
          {t('infmemFiles.chatFallback')}
        </p>
      )}
    </>
  );
}
