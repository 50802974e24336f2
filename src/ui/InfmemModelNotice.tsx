import { useTranslation } from 'react-i18next';
import type { RunRecord } from './data';

/**
 * What an InfMem read with a model did with its requests: the chat text the
 * app rendered them in and where its two prompt files came from, and where
 * they are not the official code's: a server without raw completions was sent
 * them at its chat endpoint, control strings of the book were made inert, or
 * a search's four passages were cut inside a tie of equal scores.
 */
export function InfmemModelNotice({ run }: { run: Pick<RunRecord, 'infmemModel'> & Partial<Pick<RunRecord, 'infmem'>> }) {
  const { t } = useTranslation();
  const model = run.infmemModel;
  const ties = run.infmem?.ties ?? [];
  return (
    <>
      {model && (
        <p className="hint">
          {t('infmemFiles.runRequests', { family: model.family === 'qwen3' ? 'Qwen3' : 'Qwen2.5', infmem: model.files.infmem, fncall: model.files.fncall })}
        </p>
      )}
      {model?.endpoint === 'chat' && (
        <p role="note" className="warning">
          {t('infmemFiles.chatFallback')}
        </p>
      )}
      {model?.inert && (
        <p role="note" className="hint">
          {t('infmemFiles.inert')}
        </p>
      )}
      {ties.length > 0 && (
        <p role="note" className="hint">
          {t('infmemFiles.ties', { count: ties.length, first: ties[0]! + 1 })}
        </p>
      )}
    </>
  );
}
