import { useTranslation } from 'react-i18next';
import { type RunRecord, store, toMarkdown } from '../data';
import { agent, call } from '../client';
import { download } from '../download';
import { runExport } from './run-export';

function fileStem(run: RunRecord): string {
  const q = run.question
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40);
  return `memagent-${q || 'run'}-${run.id.slice(0, 8)}`;
}

/** Downloads the run as JSON (everything, follow-up answers and sources included, re-importable) or Markdown (to read). */
export function ExportButtons({ run }: { run: RunRecord }) {
  const { t } = useTranslation();
  const exportAs = async (kind: 'json' | 'md') => {
    const data = await runExport(run, { store: await store, traceSources: (runId) => call(agent.findSources(runId)) });
    if (kind === 'json') download(`${fileStem(run)}.json`, 'application/json', JSON.stringify(data, null, 1));
    else download(`${fileStem(run)}.md`, 'text/markdown', toMarkdown(data));
  };
  return (
    <div className="export">
      <button type="button" onClick={() => void exportAs('json')}>
        {t('inspector.exportJson')}
      </button>
      <button type="button" onClick={() => void exportAs('md')}>
        {t('inspector.exportMd')}
      </button>
    </div>
  );
}
