import { type SetStateAction, useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { EngineInfo } from '../engines/engine';
import { importTokenizerEngine } from '../engines/infos';
import { type DocumentRecord, type RunRecord, store } from './data';
import { agent, call, onRunEvent } from './client';
import { FieldError } from './FieldError';
import { ImportProgress } from './ImportProgress';
import { Library } from './Library';
import { LibraryPage } from './pages/LibraryPage';
import { ModelsPage } from './pages/ModelsPage';
import { ReadPage } from './pages/ReadPage';
import { ReadForm } from './ReadForm';
import { citedFromUrl, forgetRunInUrl, goTo, onHistory, type Place, revisionFromUrl, runIdFromUrl, showInUrl } from './route';
import { RunList } from './RunList';
import { RunSearch } from './RunSearch';
import { RunView } from './RunView';
import type { ReadAction } from './ReadQuestions';
import type { CitedMark } from './inspector/RevisionDetail';
import type { SourceTarget } from './Sources';
import { StorageStatus } from './StorageStatus';
import { useAddBooks } from './useAddBooks';
import { useImport } from './useImport';
import { useReadSubmit } from './useReadSubmit';
import { useRun } from './useRun';
import { useRunOnForm } from './useRunOnForm';
import { useFocusRun } from './useFocusRun';
import { useFileDrop } from './useFileDrop';
import { useRunImport } from './useRunImport';
import { keepChosenBooks } from './chosen-books';
import { type BookOrigin, choiceToKeep } from './run-form';

/** The cited sentence the address names, as the section pane marks it. */
function markFromUrl(): CitedMark | null {
  const place = citedFromUrl();
  return place && { ...place, focus: 0 };
}

/** Read, Library and Models: the places that share the chosen book, the runs and the run in view. */
export function App({ place }: { place: Place }) {
  const { t } = useTranslation();
  const [engines, setEngines] = useState<readonly EngineInfo[]>([]);
  // The books the Read form takes, in reading order: one, or several read as one set.
  const [books, setBooks] = useState<DocumentRecord[]>([]);
  // Whether the person chose them, or the form took them from the run shown: the form says which.
  const [bookOrigin, setBookOrigin] = useState<BookOrigin | null>(null);
  const placeBooks = useCallback((docs: DocumentRecord[], origin: BookOrigin) => {
    setBooks(docs);
    setBookOrigin(origin);
  }, []);
  /** The person's own books (chosen, added, reordered): kept for the next visit until they are read. */
  const chooseOwn = useCallback((docs: SetStateAction<DocumentRecord[]>) => {
    setBooks(docs);
    setBookOrigin('chosen');
  }, []);
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const [runId, setRunId] = useState<string | null>(runIdFromUrl);
  const [selected, setSelected] = useState<number | null>(revisionFromUrl);
  const [cited, setCited] = useState<CitedMark | null>(() => markFromUrl());
  const [error, setError] = useState<string | null>(null);
  // A file that could not be added: told beside the picker it was chosen in.
  const [fileError, setFileError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const imports = useImport();
  const view = useRun(runId, imports.version);
  const runColumn = useRef<HTMLDivElement>(null);
  // The Read form takes the run opened here (by its address, a reload, the Library, Back), unless it started it.
  const { shown, follow, forget } = useRunOnForm({ view, setBooks: placeBooks, runColumn });
  // Books chosen and not read yet are kept: a reload, or Back to another run, leaves them on the form.
  const unread = choiceToKeep(
    books.map((b) => b.id),
    bookOrigin,
    view.run,
  );
  const unreadKey = unread?.join('|') ?? null;
  const unreadChoice = useRef(unreadKey);
  useEffect(() => {
    unreadChoice.current = unreadKey;
    keepChosenBooks(unreadKey === null ? null : unreadKey.split('|'));
  }, [unreadKey]);
  // Where the run shown was opened from: deleting it goes back there, and says so there.
  const [runFrom, setRunFrom] = useState<Place>('read');
  const [deleted, setDeleted] = useState<{ question: string; place: Place } | null>(null);
  const deletedNotice = useRef<HTMLParagraphElement>(null);
  // The engine whose tokenizer counts a new book's tokens.
  const importEngine = importTokenizerEngine();

  const refreshRuns = useCallback(async () => setRuns(await (await store).listRuns()), []);

  // A page whose database the browser closed (site data cleared) can show nothing more: it says so.
  useEffect(() => {
    let stop = () => {};
    void store.then((s) => (stop = s.onLost((e) => setError(e.message))));
    return () => stop();
  }, []);

  const runShown = useRef(runId);
  useEffect(() => {
    runShown.current = runId;
  }, [runId]);

  // Back and Forward between runs show the run their address names.
  useEffect(
    () =>
      onHistory(() => {
        const id = runIdFromUrl();
        // Another run: the form takes it. The same run (Back from one of its sources) leaves the form as the person left it.
        if (id && id !== runShown.current && unreadChoice.current === null) follow(id);
        if (id) setRunId(id);
        setSelected(revisionFromUrl());
        setCited(markFromUrl());
      }),
    [follow],
  );

  // A message belongs to the place it was raised in: leaving the place clears it, in the same render.
  const [errorPlace, setErrorPlace] = useState(place);
  if (errorPlace !== place) {
    setErrorPlace(place);
    setError(null);
    setFileError(null);
    if (deleted && deleted.place !== place) setDeleted(null);
  }

  // Whoever deleted a run is told where they landed, with focus there (the button they pressed is gone).
  useEffect(() => {
    if (deleted) deletedNotice.current?.focus();
  }, [deleted]);

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

  const addFiles = useAddBooks({ imports, importEngine, setBooks: chooseOwn, setError: setFileError, setBusy, refreshRuns });
  const focusRun = useFocusRun(view.run?.id, runColumn);
  const read = useReadSubmit({ books, setError, setBusy, openRun: (id) => openRun(id), refreshRuns, runColumn });

  /** Shows a run the Read form started: the form holds it already. */
  const openRun = (id: string) => {
    forget();
    focusRun(id);
    showInUrl(id);
    setRunId(id);
    setSelected(null);
    setCited(null);
    setRunFrom('read');
    setDeleted(null);
  };

  /** Opens a run from the Library: the Read page shows it, the form takes it, and Back returns. */
  const showRun = (id: string) => {
    goTo('read', { run: id, rev: null, cite: null }, () => runColumn.current);
    setRunId(id);
    follow(id);
    setSelected(null);
    setCited(null);
    setRunFrom('library');
    setDeleted(null);
  };

  /** The books to read, as the person chose them: a run still being opened leaves them be. */
  const chooseBooks = (docs: DocumentRecord[]) => {
    forget();
    chooseOwn(docs);
  };

  /** Opens books from the Library on the Read form: one, or several to read together in this order. */
  const openBooks = (docs: DocumentRecord[]) => {
    chooseBooks(docs);
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
    // A new history entry: Back returns to the answer the link was followed from.
    showInUrl(runId, target.revision, mark, { push: true });
    setSelected(target.revision);
    setCited((c) => (mark ? { revision: target.revision, ...mark, focus: (c?.focus ?? 0) + 1 } : null));
  };

  /** Another question of the read in view: its revisions at the same chunk, or at one of its answer's sources. */
  const showQuestion = (id: string, source?: SourceTarget) => {
    const revision = source?.revision ?? selected;
    const mark = source?.start !== undefined && source.end !== undefined ? { start: source.start, end: source.end } : null;
    showInUrl(id, revision, mark, { push: true });
    setRunId(id);
    setSelected(revision);
    setCited(mark && revision !== null ? { revision, ...mark, focus: 1 } : null);
  };

  const { alreadyHere, importRun } = useRunImport(async (id) => {
    await refreshRuns();
    showRun(id);
  }, setError);

  const control = (action: 'pauseRun' | 'resumeRun' | 'cancelRun') => async () => {
    if (!runId) return false;
    try {
      await call(agent[action](runId));
      return true;
    } catch (e) {
      setError((e as Error).message);
      return false;
    }
  };

  /** After a deletion: back to where the run was opened from (the Library, or the Read page), which says what went. */
  const leaveDeleted = async (question: string) => {
    forgetRunInUrl();
    setRunId(null);
    setDeleted({ question, place: runFrom });
    if (runFrom !== place) goTo(runFrom, { run: null, rev: null, cite: null }, () => deletedNotice.current);
    await refreshRuns();
  };

  /** Deletes the run shown (RunDelete asked first) and goes back to where it was opened from: the Library, or the Read page. */
  const deleteRun = async () => {
    if (!runId) return;
    const question = view.run?.question ?? '';
    try {
      await call(agent.deleteRun(runId));
      await leaveDeleted(question);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  /** The whole read in view: each of its questions paused, resumed together, cancelled or deleted (asked first). */
  const controlRead = async (action: ReadAction, readId: string) => {
    const questions = runs.filter((r) => r.readId === readId).map((r) => r.question);
    try {
      if (action === 'pause') await call(agent.pauseRead(readId));
      else if (action === 'resume') await call(agent.resumeRead(readId));
      else if (action === 'cancel') await call(agent.cancelRead(readId));
      else {
        await call(agent.deleteRead(readId));
        await leaveDeleted(questions.join(' · '));
      }
      return true;
    } catch (e) {
      setError((e as Error).message);
      return false;
    }
  };

  /** Said on the page the deletion landed on, and only there (the pages stay mounted: one notice, one ref). */
  const deletedAlert = (at: Place) =>
    deleted &&
    deleted.place === at &&
    place === at && (
      <p role="status" className="deleted-notice" tabIndex={-1} ref={deletedNotice}>
        {t('runDelete.done', { question: deleted.question })}
      </p>
    );

  const drop = useFileDrop((files) => {
    // The books become the Read form's, in the order dropped; the Library shows their import as well.
    if (place !== 'library') goTo('read');
    forget();
    void addFiles(files);
  });

  const errorAlert = error && (
    <p role="alert" className="error">
      {error}
    </p>
  );
  // Files dropped on the Library are told of there.
  const libraryAlert = errorAlert || <FieldError message={fileError} />;

  return (
    <div className="app" {...drop.handlers}>
      {drop.dragging && (
        <div className="drop-target" role="status">
          {t('read.dropHere')}
        </div>
      )}
      <ReadPage
        active={place === 'read'}
        runRef={runColumn}
        form={
          <ReadForm
            engines={engines}
            books={books}
            busy={busy}
            importStatus={<ImportProgress progress={imports.progress} />}
            fileError={<FieldError message={fileError} />}
            libraryVersion={imports.version}
            onFiles={(files, append) => {
              forget();
              void addFiles(files, append);
            }}
            onBooks={chooseBooks}
            onRead={(r) => void read(r)}
            shown={shown}
            bookOrigin={bookOrigin}
            onEdit={forget}
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
              onShowQuestion={showQuestion}
              onReadControl={controlRead}
            />
          ) : (
            deletedAlert('read') || null
          )
        }
      />
      <LibraryPage
        active={place === 'library'}
        importProgress={<ImportProgress progress={imports.progress} />}
        error={
          <>
            {deletedAlert('library')}
            {libraryAlert}
          </>
        }
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
        runs={
          <RunSearch runs={runs} found={alreadyHere} onOpen={showRun}>
            {(shown, search) => <RunList runs={shown} current={runId} onOpen={showRun} onImport={(f) => void importRun(f)} search={search} />}
          </RunSearch>
        }
        storage={<StorageStatus />}
      />
      <ModelsPage active={place === 'models'} />
    </div>
  );
}
