import { useEffect, useId, useState } from 'react';
import type { DocumentRecord, RunRecord } from '../storage/db';
import { agent, call, onRunEvent, store } from './client';
import { formatBytes, formatTokens } from './format';
import type { ImportState } from './useImport';

interface Props {
  /** The document the Read form uses. */
  current: DocumentRecord | null;
  runs: readonly RunRecord[];
  imports: ImportState;
  onOpen(doc: DocumentRecord): void;
  onOpenRun(runId: string): void;
  /** After a document and its runs were deleted. */
  onDeleted(id: string): void;
  onError(message: string): void;
}

const FORMAT_NAMES: Record<string, string> = {
  text: 'Text',
  markdown: 'Markdown',
  html: 'HTML',
  epub: 'EPUB',
  pdf: 'PDF',
  docx: 'Word',
};

function formatDate(t: number): string {
  return new Date(t).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'short' });
}

/** Every stored book: what it is, its runs, and Open and Delete. */
export function Library({ current, runs, imports, onOpen, onOpenRun, onDeleted, onError }: Props) {
  const [docs, setDocs] = useState<DocumentRecord[]>([]);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [deletions, setDeletions] = useState(0);
  // A long book's exact count lands after its import.
  const [counted, setCounted] = useState(0);
  const stripId = useId();

  useEffect(() => onRunEvent((e) => e.type === 'document' && setCounted((n) => n + 1)), []);

  useEffect(() => {
    let alive = true;
    void (async () => {
      const all = await (await store).listDocuments();
      all.sort((a, b) => b.addedAt - a.addedAt);
      if (alive) setDocs(all);
    })();
    return () => {
      alive = false;
    };
  }, [imports.version, deletions, runs.length, counted]);

  const remove = async (doc: DocumentRecord) => {
    setConfirming(null);
    try {
      await call(agent.deleteDocument(doc.id));
      onDeleted(doc.id);
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setDeletions((n) => n + 1);
    }
  };

  return (
    <section aria-label="Library" className="library">
      <h2>Books</h2>
      <div className="check">
        <input
          id={stripId}
          type="checkbox"
          checked={imports.stripGutenberg}
          onChange={(e) => imports.setStripGutenberg(e.target.checked)}
        />
        <label htmlFor={stripId}>Remove Project Gutenberg header and licence</label>
      </div>
      {docs.length === 0 ? (
        <p className="hint">No documents yet. Books you add stay in this browser.</p>
      ) : (
        <ul className="library-list" aria-label="Books">
          {docs.map((doc) => {
            const own = runs.filter((r) => r.documentId === doc.id);
            const open = current?.id === doc.id;
            return (
              <li key={doc.id} aria-label={doc.name} aria-current={open || undefined} className={open ? 'doc current' : 'doc'}>
                <div className="doc-name">{doc.title && doc.title !== doc.name ? `${doc.title} (${doc.name})` : doc.name}</div>
                <div className="hint">
                  {[
                    FORMAT_NAMES[doc.format ?? 'text'] ?? doc.format,
                    formatBytes(doc.bytes),
                    formatTokens(doc),
                    doc.pages ? `${doc.pages} pages` : '',
                    `added ${formatDate(doc.addedAt)}`,
                    doc.importing ? 'still being stored' : '',
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </div>
                {doc.stripped && (
                  <div className="hint">
                    Project Gutenberg header ({doc.stripped.header.toLocaleString('en')} characters) and licence (
                    {doc.stripped.footer.toLocaleString('en')} characters) removed; kept with the book.
                  </div>
                )}
                {own.length > 0 && (
                  <ul className="doc-runs" aria-label={`Runs of ${doc.name}`}>
                    {own.map((r) => (
                      <li key={r.id}>
                        <button type="button" className="link" onClick={() => onOpenRun(r.id)}>
                          {r.question}
                        </button>{' '}
                        <span className="hint">{r.status}</span>
                      </li>
                    ))}
                  </ul>
                )}
                {confirming === doc.id ? (
                  <div className="controls" role="group" aria-label="Confirm delete">
                    <span>
                      Delete this book{own.length ? ` and its ${own.length} run${own.length > 1 ? 's' : ''}` : ''}?
                    </span>
                    <button type="button" onClick={() => void remove(doc)}>
                      Yes, delete
                    </button>
                    <button type="button" onClick={() => setConfirming(null)}>
                      Keep
                    </button>
                  </div>
                ) : (
                  <div className="controls">
                    <button type="button" onClick={() => onOpen(doc)} disabled={open}>
                      Open
                    </button>
                    <button type="button" onClick={() => setConfirming(doc.id)}>
                      Delete
                    </button>
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
