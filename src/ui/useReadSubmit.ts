import type { RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { readSettings } from '../core/plan';
import type { RunRequest } from '../agent/protocol';
import { agent, call } from './client';
import type { DocumentRecord } from './data';
import type { ReadRequest } from './ReadForm';
import { engineUi } from './engines';
import { methodOf, settingsProblem } from './settings';
import { offerReadNotice } from './useReadNotices';

export interface ReadSubmitOptions {
  books: readonly DocumentRecord[];
  setError(message: string | null): void;
  setBusy(busy: boolean): void;
  /** Shows the first run started. */
  openRun(id: string): void;
  refreshRuns(): Promise<void>;
  /** Where the run shows: brought into view on a narrow screen, where it sits under the form. */
  runColumn: RefObject<HTMLDivElement | null>;
}

/** One run, or one per question over the same book (the worker shares the chunk list and shares out the engine). */
async function startRuns(questions: string[], request: Omit<RunRequest, 'question'>): Promise<string[]> {
  return questions.length > 1 ? call(agent.startRuns(request, questions)) : [await call(agent.startRun({ ...request, question: questions[0] ?? '' }))];
}

/** The Read button: checks the request, starts its runs and shows the first. */
export function useReadSubmit({ books, setError, setBusy, openRun, refreshRuns, runColumn }: ReadSubmitOptions) {
  const { t } = useTranslation();
  return async (request: ReadRequest): Promise<void> => {
    setError(null);
    if (books.length === 0) return setError(t('read.needDocument'));
    if (!request.question.trim()) return setError(t('read.needQuestion'));
    const empty = request.questions.findIndex((q) => !q.trim());
    if (empty > 0) return setError(t('read.emptyQuestion', { n: empty + 1 }));
    const problem = settingsProblem(request) ?? engineUi(request.engineId).configProblem?.(request.engineConfig);
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
        method: methodOf(request),
        // InfMem chooses what to read itself: a skim is MemAgent's alone.
        skim:
          request.skim && request.method !== 'infmem'
            ? { keep: request.skimPercent / 100, followMemory: request.skimFollow, lookBack: request.skimFollow && request.skimLookBack }
            : undefined,
      });
      openRun(ids[0]!);
      await refreshRuns();
      const column = runColumn.current;
      if (column && column.getBoundingClientRect().top > innerHeight * 0.75) column.scrollIntoView({ block: 'start' });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
}
