import { type DragEvent, useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { EngineInfo } from '../engines/engine';
import { importTokenizerEngine } from '../engines/infos';
import { readSettings } from '../core/plan';
import { checkExportSize, type DocumentRecord, type RunRecord, store } from './data';
import type { RunRequest } from '../agent/protocol';
import { agent, call, onRunEvent } from './client';
import { ImportProgress } from './ImportProgress';
import { Library } from './Library';
import { LibraryPage } from './pages/LibraryPage';
import { ModelsPage } from './pages/ModelsPage';
import { ReadPage } from './pages/ReadPage';
import { type ReadRequest, ReadForm } from './ReadForm';
import { goTo, onHistory, type Place } from './route';
import { RunList } from './RunList';
import { RunView } from './RunView';
import type { CitedMark } from './inspector/Inspector';
import type { SourceTarget } from './Sources';
import { settingsProblem } from './settings';
import { StorageStatus } from './StorageStatus';
import { useImport } from './useImport';
import { useRun } from './useRun';
import { offerReadNotice } from './useReadNotices';

function runIdFromUrl(): string | null {
  return new URLSearchParams(location.search).get('run');
}

/** The revision in the URL, 1-based there, 0-based here; null to follow the newest. */
function revisionFromUrl(): number | null {
  const rev = Number(new URLSearchParams(location.search).get('rev'));
  return Number.isInteger(rev) && rev >= 1 ? rev - 1 : null;
}

/** The cited sentence in the URL (?cite=start-end, with the revision that holds it), from a source's link; null without one. */
function citedFromUrl(focus = 0): CitedMark | null {
  const params = new URLSearchParams(location.search);
  const revision = revisionFromUrl();
  const m = /^(\d+)-(\d+)$/.exec(params.get('cite') ?? '');
  return revision !== null && m ? { revision, start: Number(m[1]), end: Number(m[2]), focus } : null;
}

/** Each run and revision has a URL that survives a reload and can be opened in another tab; a source's adds its sentence. */
function showInUrl(runId: string, revision: number | null = null, cited: { start: number; end: number } | null = null): void {
  const url = new URL(location.href);
  url.searchParams.set('run', runId);
  if (revision === null) url.searchParams.delete('rev');
  else url.searchParams.set('rev', String(revision + 1));
  if (cited) url.searchParams.set('cite', `${cited.start}-${cited.end}`);
  else url.searchParams.delete('cite');
  history.replaceState(null, '', url);
}

/** Read, Library and Models: the places that share the chosen book, the runs and the run in view. */
export function App({ place }: { place: Place }) {
  const { t } = useTranslation();
  const [engines, setEngines] = useState<readonly EngineInfo[]>([]);
  // The books the Read form takes, in reading order: one, or several read as one set.
  const [books, setBooks] = useState<DocumentRecord[]>([]);
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const [runId, setRunId] = useState<string | null>(runIdFromUrl);
  const [selected, setSelected] = useState<number | null>(revisionFromUrl);
  const [cited, setCited] = useState<CitedMark | null>(() => citedFromUrl());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const imports = useImport();
  const view = useRun(runId, imports.version);
  const runColumn = useRef<HTMLDivElement>(null);

  const refreshRuns = useCallback(async () => setRuns(await (await store).listRuns()), []);

  // A page whose database the browser closed (site data cleared) can show nothing more: it says so.
  useEffect(() => {
    let stop = () => {};
    void store.then((s) => (stop = s.onLost((e) => setError(e.message))));
    return () => stop();
  }, []);

  // Back and Forward between runs show the run their address names.
  useEffect(
    () =>
      onHistory(() => {
        const id = runIdFromUrl();
        if (id) setRunId(id);
        setSelected(revisionFromUrl());
        setCited(citedFromUrl());
      }),
    [],
  );

  // A message belongs to the place it was raised in: leaving the place clears it, in the same render.
  const [errorPlace, setErrorPlace] = useState(place);
  if (errorPlace !== place) {
    setErrorPlace(place);
    setError(null);
  }

  useEffect(() => {
    void agent.engines().then(setEngines);
    // Runs that were reading when the page went away carry on by themselves: the worker resumes them.
    void (async () => {
      const all = await (await store).listRuns();
      setRuns(all);
      setRunId((current) => current ?? all[0]?.id ?? null);
    })();
    // Each run in the list shows its progress: refreshed at most every 300 ms while runs read.
    let progressTimer: ReturnType<typeof setTimeout> | undefined;
    const stop = onRunEvent((e) => {
      if (e.type === 'status') void refreshRuns();
      if (e.type === 'revision' || e.type === 'chunks') {
        progressTimer ??= setTimeout(() => {
          progressTimer = undefined;
          void refreshRuns();
        }, 300);
      }
      // A long book's exact token count arrives after its import.
      if (e.type === 'document') {
        void (async () => {
          const doc = await (await store).getDocument(e.documentId);
          if (doc) setBooks((current) => current.map((b) => (b.id === doc.id ? doc : b)));
        })();
      }
    });
    return () => {
      stop();
      clearTimeout(progressTimer);
    };
  }, [refreshRuns]);

  /**
   * Imports `files` one after another, in their order: they replace the Read
   * form's books, or with `append` join them at the end. Each book joins the
   * form as soon as it can be read; a file that fails is named, and the others
   * are still added.
   */
  const addFiles = async (files: readonly File[], append = false) => {
    setError(null);
    setBusy(true);
    if (!append) setBooks([]);
    const failed: string[] = [];
    for (const file of files) {
      let usable: string | null = null;
      try {
        const doc = await imports.importFile(file, importTokenizerEngine(), (d) => {
          // Readable now, while the rest of its text is stored.
          usable = d.id;
          setBooks((current) => (current.some((b) => b.id === d.id) ? current : [...current, d]));
          if (files.length === 1) setBusy(false);
        });
        // The form now has the whole book, or the same book stored before; unless it was taken off the form meanwhile.
        const shown = usable;
        setBooks((current) =>
          current.some((b) => b.id === doc.id) ? current.map((b) => (b.id === doc.id ? doc : b)) : shown === null ? [...current, doc] : current,
        );
      } catch (e) {
        failed.push(files.length > 1 ? t('sets.notAdded', { name: file.name, error: (e as Error).message }) : (e as Error).message);
        // Nothing of a book that failed to store completely is kept (nor the reads started on it).
        if (usable !== null) {
          const gone = usable;
          setBooks((current) => current.filter((b) => b.id !== gone));
          void refreshRuns();
        }
      }
    }
    setBusy(false);
    if (failed.length) setError(failed.join(' '));
  };

  const read = async (request: ReadRequest) => {
    setError(null);
    if (books.length === 0) return setError(t('read.needDocument'));
    if (!request.question.trim()) return setError(t('read.needQuestion'));
    const empty = request.questions.findIndex((q) => !q.trim());
    if (empty > 0) return setError(t('read.emptyQuestion', { n: empty + 1 }));
    const problem = settingsProblem(request);
    if (problem) return setError(problem);
    // Still inside the Read button's event: the one moment a page may ask to notify.
    offerReadNotice(request.estimateMs);
    setBusy(true);
    try {
      const ids = await startRuns(request.questions, {
        documentId: books[0]!.id,
        // Several books: read in this order as one stream, with one memory.
        ...(books.length > 1 ? { documentIds: books.map((b) => b.id) } : {}),
        engineId: request.engineId,
        engineConfig: request.engineConfig,
        ...readSettings(request),
        prompts: request.promptSet ?? 'auto',
        templates: request.promptSet === 'custom' ? request.templates : undefined,
        skim: request.skim
          ? { keep: request.skimPercent / 100, followMemory: request.skimFollow, lookBack: request.skimFollow && request.skimLookBack }
          : undefined,
      });
      openRun(ids[0]!);
      await refreshRuns();
      // Where the run sits under the form (a narrow screen), bring it into view.
      const column = runColumn.current;
      if (column && column.getBoundingClientRect().top > innerHeight * 0.75) column.scrollIntoView({ block: 'start' });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  /** One run, or one per question over the same book (the worker shares the chunk list and shares out the engine). */
  const startRuns = async (questions: string[], request: Omit<RunRequest, 'question'>): Promise<string[]> =>
    questions.length > 1 ? call(agent.startRuns(request, questions)) : [await call(agent.startRun({ ...request, question: questions[0] ?? '' }))];

  const openRun = (id: string) => {
    showInUrl(id);
    setRunId(id);
    setSelected(null);
    setCited(null);
  };

  /** Opens a run from the Library: the Read page shows it, and Back returns. */
  const showRun = (id: string) => {
    goTo('read', { run: id, rev: null, cite: null }, () => runColumn.current);
    setRunId(id);
    setSelected(null);
    setCited(null);
  };

  /** Opens books from the Library on the Read form: one, or several to read together in this order. */
  const openBooks = (docs: DocumentRecord[]) => {
    setBooks(docs);
    goTo('read');
  };

  const selectRevision = (index: number) => {
    if (!runId) return;
    showInUrl(runId, index);
    setSelected(index);
    setCited(null);
  };

  /** A source's link: the inspector at its revision, the cited sentence marked in the section pane and focused. */
  const openSource = (target: SourceTarget) => {
    if (!runId) return;
    const mark = target.start !== undefined && target.end !== undefined ? { start: target.start, end: target.end } : null;
    showInUrl(runId, target.revision, mark);
    setSelected(target.revision);
    setCited((c) => (mark ? { revision: target.revision, ...mark, focus: (c?.focus ?? 0) + 1 } : null));
  };

  const importRun = async (file: File) => {
    setError(null);
    try {
      // A huge file is refused before it is read into this tab.
      checkExportSize(file.size);
      const id = await call(agent.importRun(await file.text()));
      await refreshRuns();
      showRun(id);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const control = (action: 'pauseRun' | 'resumeRun' | 'cancelRun') => async () => {
    if (!runId) return;
    try {
      await call(agent[action](runId));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const deleteRun = async () => {
    if (!runId) return;
    try {
      await call(agent.deleteRun(runId));
      const url = new URL(location.href);
      url.searchParams.delete('run');
      url.searchParams.delete('rev');
      url.searchParams.delete('cite');
      history.replaceState(null, '', url);
      setRunId(null);
      await refreshRuns();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    const files = [...e.dataTransfer.files];
    if (files.length === 0) return;
    // The books become the Read form's, in the order dropped; the Library shows their import as well.
    if (place !== 'library') goTo('read');
    void addFiles(files);
  };

  const errorAlert = error && (
    <p role="alert" className="error">
      {error}
    </p>
  );

  return (
    <div className="app" onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
      <ReadPage
        active={place === 'read'}
        runRef={runColumn}
        form={
          <ReadForm
            engines={engines}
            books={books}
            busy={busy}
            importStatus={<ImportProgress progress={imports.progress} />}
            libraryVersion={imports.version}
            onFiles={(files, append) => void addFiles(files, append)}
            onBooks={setBooks}
            onRead={(r) => void read(r)}
          />
        }
        error={errorAlert}
        run={
          view.run ? (
            <RunView
              run={view.run}
              runs={runs}
              revisions={view.revisions}
              writing={view.writing}
              selected={selected}
              onSelect={selectRevision}
              book={view.book}
              books={view.books}
              onPause={control('pauseRun')}
              onResume={control('resumeRun')}
              onCancel={control('cancelRun')}
              onDelete={() => void deleteRun()}
              cited={cited}
              onOpenSource={openSource}
            />
          ) : null
        }
      />
      <LibraryPage
        active={place === 'library'}
        importProgress={<ImportProgress progress={imports.progress} />}
        error={errorAlert}
        books={
          <Library
            current={books}
            runs={runs}
            imports={imports}
            onOpen={openBooks}
            onOpenRun={showRun}
            onDeleted={(id) => {
              setBooks((current) => current.filter((b) => b.id !== id));
              if (view.run?.documentId === id || view.run?.books?.some((b) => b.documentId === id)) setRunId(null);
              void refreshRuns();
            }}
            onError={setError}
          />
        }
        runs={<RunList runs={runs} current={runId} onOpen={showRun} onImport={(f) => void importRun(f)} />}
        storage={<StorageStatus />}
      />
      <ModelsPage active={place === 'models'} />
    </div>
  );
}
