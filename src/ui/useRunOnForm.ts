import { type RefObject, useCallback, useEffect, useEffectEvent, useRef, useState } from 'react';
import type { PromptSetId } from '../core/prompt-sets';
import { type DocumentRecord, type RunRecord, store } from './data';
import type { EngineChoice } from './engines/EngineChoice';
import { keepChosenBooks, loadChosenBooks } from './chosen-books';
import { type BookOrigin, formSettingsOf, questionsOf, type RunOnForm } from './run-form';
import { runIdFromUrl } from './route';
import type { ReadFormSettings } from './settings';
import type { RunView } from './useRun';

/** A run the form is to take once it is read: the one named (null: the first that opens), and whether to bring it into view. */
interface Wanted {
  runId: string | null;
  scroll: boolean;
}

/** A first visit takes the run its address names, or else the newest run, which the page opens. */
function firstVisit(): Wanted {
  return { runId: runIdFromUrl(), scroll: runIdFromUrl() !== null };
}

interface Options {
  view: RunView;
  /** Puts books on the form: the run's, or the person's own choice kept from their last visit. */
  setBooks(books: DocumentRecord[], origin: BookOrigin): void;
  /** Where the run shows: on a narrow screen, under the form. */
  runColumn: RefObject<HTMLDivElement | null>;
}

/**
 * The Read form follows the run opened on the Read page, by its address, a
 * reload, the Library or Back: its books, its questions and its settings, once
 * the run is read from storage. A run the form itself started needs nothing,
 * and a form the person changes before the run is read stays theirs. Books
 * the person chose and did not read yet stay theirs after a reload: the form
 * takes them back, and not the run shown.
 */
export function useRunOnForm({ view, setBooks, runColumn }: Options) {
  const [keptAtStart] = useState(loadChosenBooks);
  const wanted = useRef<Wanted | null>(keptAtStart.length ? null : firstVisit());
  const [asked, setAsked] = useState(0);
  const [shown, setShown] = useState<RunOnForm | null>(null);
  const arrived = useRef<{ key: number; scroll: boolean }>({ key: 0, scroll: false });
  const run = view.run;

  /** The form is to show run `runId` once it is read, and the run be brought into view. */
  const follow = useCallback((runId: string) => {
    wanted.current = { runId, scroll: true };
    setAsked((n) => n + 1);
  }, []);
  const followShown = useCallback(() => {
    wanted.current = firstVisit();
    setAsked((n) => n + 1);
  }, []);
  const dropKept = useKeptBooks(keptAtStart, setBooks, followShown);
  /** The form is the person's (they changed it, or it started the run shown). */
  const forget = useCallback(() => {
    wanted.current = null;
    dropKept();
  }, [dropKept]);

  useEffect(() => {
    const want = wanted.current;
    if (!want || !run || (want.runId !== null && want.runId !== run.id)) return;
    const books = run.books ? view.books.filter((b): b is DocumentRecord => b !== null) : view.book ? [view.book] : [];
    void (async () => {
      let runs: RunRecord[] = [];
      try {
        runs = await (await store).listRuns();
      } catch {
        // Storage out of reach (the page says so): the form takes the run's own question alone.
      }
      // Another run opened meanwhile, or the person changed the form: theirs stays.
      if (wanted.current !== want) return;
      wanted.current = null;
      arrived.current = { key: arrived.current.key + 1, scroll: want.scroll };
      setBooks(books, 'run');
      setShown({ key: arrived.current.key, run, questions: questionsOf(run, runs) });
    })();
  }, [run, view.book, view.books, asked, setBooks]);

  // On a narrow screen the run sits under the form: a run opened by a link or from the Library is brought into view.
  useEffect(() => {
    if (!shown || shown.key !== arrived.current.key || !arrived.current.scroll) return;
    const column = runColumn.current;
    if (column && column.getBoundingClientRect().top > innerHeight * 0.75) column.scrollIntoView({ block: 'start' });
  }, [shown, runColumn]);

  return { shown, follow, forget };
}

/** The books kept from the last visit, as stored now, back on the form; where none is left, `followShown` instead. Returns what forgets them. */
function useKeptBooks(atStart: string[], setBooks: Options['setBooks'], followShown: () => void): () => void {
  const kept = useRef(atStart);
  useEffect(() => {
    const ids = kept.current;
    if (!ids.length) return;
    void (async () => {
      let docs: DocumentRecord[] = [];
      try {
        const db = await store;
        docs = (await Promise.all(ids.map((id) => db.getDocument(id)))).filter((d): d is DocumentRecord => d !== undefined);
      } catch {
        // Storage out of reach (the page says so): nothing to put back.
      }
      // The person chose something else meanwhile: theirs stays.
      if (kept.current !== ids) return;
      kept.current = [];
      if (docs.length) return setBooks(docs, 'chosen');
      keepChosenBooks(null);
      followShown();
    })();
  }, [setBooks, followShown]);
  // The person chose something else: the books kept are no longer theirs to put back.
  return useCallback(() => {
    kept.current = [];
  }, []);
}

/** What the form sets when it takes a run. */
interface Form {
  setQuestions(questions: string[]): void;
  updateSettings(change: Partial<ReadFormSettings>): void;
  promptSet: PromptSetId | null;
  choice: EngineChoice;
}

/** The form takes each run it is shown: its questions, settings and engine with the engine's choices. */
export function useShownRun(shown: RunOnForm | null | undefined, form: Form): void {
  const take = useEffectEvent(({ run, questions }: RunOnForm) => {
    form.setQuestions(questions);
    form.updateSettings(formSettingsOf(run, form.promptSet));
    form.choice.choose(run.engineId);
    // A run keeps no secret (runs/plan.ts): the engine's key, where it has one, stays the form's.
    if (run.engineConfig && Object.keys(run.engineConfig).length) form.choice.configure(run.engineId, { ...run.engineConfig });
  });
  useEffect(() => {
    if (shown) take(shown);
  }, [shown]);
}
