import { type FormEvent, type ReactNode, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { EngineConfig, EngineInfo } from '../engines/engine';
import { ENGINE_UI, usePreferredEngine } from './engines';
import { EngineFields, useEngineChoice } from './engines/EngineChoice';
import type { DocumentRecord } from './data';
import { formatBytes, formatTokens } from './format';
import { type ReadFormSettings, useReadSettings } from './settings';
import { ReadEstimate } from './ReadEstimate';
import { SettingsPanel } from './SettingsPanel';
import { QuestionList } from './QuestionList';

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
  document: DocumentRecord | null;
  busy: boolean;
  /** How far the book being added has come, shown under Document. */
  importStatus?: ReactNode;
  onFile(file: File): void;
  onRead(request: ReadRequest): void;
}

/** Everything a read needs: the book, the question, the engine and the two sizes. */
export function ReadForm({ engines, document, busy, importStatus, onFile, onRead }: Props) {
  const { t } = useTranslation();
  const ids = { doc: useId() };
  const [questions, setQuestions] = useState<string[]>(['']);
  const [settings, updateSettings] = useReadSettings();
  const [estimateMs, setEstimateMs] = useState<number | null>(null);
  // Until the person picks one: WebLLM where a hardware GPU can run it, else the first engine.
  const choice = useEngineChoice(engines, usePreferredEngine());
  const { engine, config: engineConfig } = choice;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    onRead({ ...settings, question: questions[0] ?? '', questions, engineId: engine?.id ?? '', engineConfig, estimateMs });
  };

  return (
    <form className="read-form" onSubmit={submit}>
      <div className="field">
        <label htmlFor={ids.doc}>{t('read.document')}</label>
        <input
          id={ids.doc}
          type="file"
          accept=".txt,.text,.md,.markdown,.html,.htm,.xhtml,.epub,.pdf,.docx,text/plain,text/markdown,text/html,application/epub+zip,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document"
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            if (file) onFile(file);
            e.currentTarget.value = ''; // the same file may be chosen again
          }}
        />
        <p className="hint" aria-live="polite">
          {document ? `${document.name} — ${formatBytes(document.bytes)}, ${formatTokens(document)}` : t('read.documentHint')}
        </p>
        {importStatus}
      </div>
      <QuestionList questions={questions} onChange={setQuestions} />
      <div className="field">
        <EngineFields engines={engines} choice={choice} />
        {Object.entries(ENGINE_UI).map(
          ([id, { Note }]) =>
            Note && (
              <Note key={id} engineId={engine?.id ?? ''} config={choice.configs[id] ?? {}} document={document} settings={settings} onChoose={choice.choose} />
            ),
        )}
      </div>
      <SettingsPanel settings={settings} onChange={updateSettings} engineId={engine?.id ?? ''} />
      <ReadEstimate document={document} engineId={engine?.id ?? ''} engineConfig={engineConfig} settings={settings} onEstimate={setEstimateMs} />
      <button type="submit" disabled={busy}>
        {t('read.read')}
      </button>
    </form>
  );
}
