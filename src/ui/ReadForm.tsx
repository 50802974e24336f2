import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { BookField } from './BookField';
import { useTranslation } from 'react-i18next';
import type { BatchSizeRequest } from '../agent/protocol';
import type { EngineConfig, EngineInfo } from '../engines/engine';
import { ENGINE_UI, engineUi, useEngineBatchSize, useEngineCannotRun, usePreferredEngine } from './engines';
import { type EngineChoice, EngineFields, useEngineChoice } from './engines/EngineChoice';
import type { DocumentRecord } from './data';
import { engineText } from './i18n';
import { type ReadFormSettings, useReadSettings } from './settings';
import { ReadEstimate } from './ReadEstimate';
import { SettingsPanel } from './SettingsPanel';
import { QuestionList } from './QuestionList';
import type { BookOrigin, RunOnForm } from './run-form';
import { useShownRun } from './useRunOnForm';
import './read-form.css';

export interface ReadRequest extends ReadFormSettings {
  /** The first question. */
  question: string;
  /** Every question, the first included: one run each over the same book. */
  questions: string[];
  engineId: string;
  engineConfig: EngineConfig;
  /** How long the read is expected to take, as the form's estimate says (null when it cannot tell). */
  estimateMs?: number | null;
}

interface Props {
  engines: readonly EngineInfo[];
  /** The books to read, in order: one, or several read as one set. */
  books: readonly DocumentRecord[];
  busy: boolean;
  /** How far the book being added has come, shown under Document. */
  importStatus?: ReactNode;
  /** Why the files chosen last could not be added, shown under the picker. */
  fileError?: ReactNode;
  /** Counts finished imports: the books offered from the Library are read again. */
  libraryVersion: number;
  /** Files chosen: they replace the books to read, or with `append` join them at the end. */
  onFiles(files: File[], append: boolean): void;
  /** The books to read, reordered, with one removed or one from the Library added. */
  onBooks(books: DocumentRecord[]): void;
  onRead(request: ReadRequest): void;
  /** The run open on the Read page, which the form takes (its books come through `books`). */
  shown?: RunOnForm | null;
  /** Whether the books are the person's choice or the run shown's: said beside their names. */
  bookOrigin?: BookOrigin | null;
  /** The person changed the form: a run still being opened does not replace what they did. */
  onEdit?(): void;
}

/** What a read takes, as one record: the book, or a set's books with their sizes added up. */
export function readingOf(books: readonly DocumentRecord[]): DocumentRecord | null {
  if (books.length <= 1) return books[0] ?? null;
  const sum = (f: (d: DocumentRecord) => number) => books.reduce((n, d) => n + f(d), 0);
  return {
    ...books[0]!,
    name: books.map((b) => b.name).join(' + '),
    bytes: sum((d) => d.bytes),
    chars: sum((d) => d.chars),
    tokens: sum((d) => d.tokens),
    tokensEstimated: books.some((d) => d.tokensEstimated) || undefined,
  };
}

/** What a read with these settings would plan its step from, as Read sends it (see useReadSubmit). */
function batchRequest(engineId: string, engineConfig: EngineConfig, settings: ReadFormSettings): BatchSizeRequest {
  const { chunkTokens, memoryTokens, promptSet, templates } = settings;
  return { engineId, engineConfig, chunkTokens, memoryTokens, prompts: promptSet ?? 'auto', templates: promptSet === 'custom' ? templates : undefined };
}

/** The engine choice, its settings and each engine's note beside it. */
function EngineField(props: {
  engines: readonly EngineInfo[];
  choice: EngineChoice;
  document: DocumentRecord | null;
  books: readonly DocumentRecord[];
  settings: ReadFormSettings;
}) {
  const { engines, choice, document, books, settings } = props;
  const engineId = choice.engine?.id ?? '';
  const onGpu = Boolean(choice.engine && engineUi(engineId).onThisGpu);
  return (
    <div className="field">
      <EngineFields engines={engines} choice={choice} />
      {Object.entries(ENGINE_UI).map(
        ([id, { Note }]) =>
          Note && (
            <Note
              key={id}
              engineId={engineId}
              config={choice.configs[id] ?? {}}
              document={document}
              books={books}
              settings={settings}
              chosenOnGpu={onGpu}
              onChoose={choice.choose}
            />
          ),
      )}
    </div>
  );
}

/** Read, off where the engine cannot run in this browser, with why beside it. */
function ReadButton({ disabled, engine }: { disabled: boolean; engine: EngineInfo | undefined }) {
  const { t } = useTranslation();
  const off = useId();
  const cannotRun = useEngineCannotRun(engine?.id ?? '');
  return (
    <div className="read-submit">
      <button type="submit" disabled={disabled || Boolean(cannotRun)} aria-describedby={cannotRun ? off : undefined}>
        {t('read.read')}
      </button>
      {cannotRun && engine && (
        <p id={off} className="hint">
          {t('read.cannotRead', { engine: engineText(engine.id, 'label', engine.label) })}
        </p>
      )}
    </div>
  );
}

/** Everything a read needs: the book (or books, in order), the question, the engine and the two sizes. */
export function ReadForm({ engines, books, busy, importStatus, fileError, libraryVersion, onFiles, onBooks, onRead, shown, bookOrigin, onEdit }: Props) {
  const [questions, setQuestions] = useState<string[]>(['']);
  const [settings, updateSettings] = useReadSettings();
  const [estimateMs, setEstimateMs] = useState<number | null>(null);
  // Until the person picks one: WebLLM where a hardware GPU can run it, else the first engine.
  const chosen = useEngineChoice(engines, usePreferredEngine());
  useShownRun(shown, { setQuestions, updateSettings, promptSet: settings.promptSet, choice: chosen });
  // What the person does here is theirs (onEdit); the engines' own forms configuring themselves is not.
  const edited =
    <T,>(change: (value: T) => void) =>
    (value: T) => {
      onEdit?.();
      change(value);
    };
  const choice = { ...chosen, choose: edited(chosen.choose) };
  const { engine, config: engineConfig } = choice;
  const document = readingOf(books);
  const cannotRun = useEngineCannotRun(engine?.id ?? '');
  // How many of the questions go together on this device, at the step a read of them would plan: said under the boxes.
  const batch = useEngineBatchSize(engine?.id ?? '', batchRequest(engine?.id ?? '', engineConfig, settings), questions);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    onRead({ ...settings, question: questions[0] ?? '', questions, engineId: engine?.id ?? '', engineConfig, estimateMs });
  };

  return (
    <form className="read-form" onSubmit={submit}>
      <BookField
        books={books}
        document={document}
        importStatus={importStatus}
        fileError={fileError}
        libraryVersion={libraryVersion}
        onFiles={onFiles}
        onBooks={onBooks}
        bookOrigin={bookOrigin}
      />
      <QuestionList questions={questions} onChange={edited(setQuestions)} engineId={engine?.id ?? ''} batch={batch} />
      <EngineField engines={engines} choice={choice} document={document} books={books} settings={settings} />
      <SettingsPanel settings={settings} onChange={edited(updateSettings)} engineId={engine?.id ?? ''} />
      <ReadEstimate
        books={books}
        engineId={engine?.id ?? ''}
        engineConfig={engineConfig}
        settings={settings}
        onEstimate={setEstimateMs}
        cannotRun={Boolean(cannotRun)}
        questions={questions.filter((q) => q.trim()).length || 1}
      />
      <ReadButton disabled={busy} engine={engine} />
    </form>
  );
}
