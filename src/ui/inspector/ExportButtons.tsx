import { useTranslation } from 'react-i18next';
import { buildExport, contentHash, type RunRecord, store, toMarkdown } from '../data';
import { download } from '../download';

function fileStem(run: RunRecord): string {
  const q = run.question
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40);
  return `memagent-${q || 'run'}-${run.id.slice(0, 8)}`;
}

/** Downloads the run as JSON (everything, follow-up answers included, re-importable) or Markdown (to read). */
export function ExportButtons({ run }: { run: RunRecord }) {
  const { t } = useTranslation();
  const exportAs = async (kind: 'json' | 'md') => {
    const s = await store;
    const [revisions, memories, followUps, doc] = await Promise.all([
      s.listRevisions(run.id),
      s.listMemories(run.id),
      s.listFollowUps(run.id),
      s.getDocument(run.documentId),
    ]);
    // The book's hash: another browser that has the same file shows this run's sections in it.
    const data = buildExport({ run, revisions, memories, followUps, documentSha256: contentHash(doc ?? { id: run.documentId }) });
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
