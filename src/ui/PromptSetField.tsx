import { useCallback, useEffect, useId, useState } from 'react';
import { FilePicker } from './FilePicker';
import { useTranslation } from 'react-i18next';
import {
  DEFAULT_PROMPTS_BASE,
  type FileSetId,
  MEMAGENT_COMMIT,
  MEMAGENT_REPOSITORY,
  PROMPT_SET_LABELS,
  type PromptSet,
  type PromptSetId,
} from '../core/prompt-sets';
import { DEFAULT_TEMPLATES, type PromptTemplates } from '../core/prompts';
import type { PromptFileStatus } from '../agent/protocol';
import { agent, call, onRunEvent } from './client';
import { engineUi } from './engines';
import { i18n } from './i18n';
import type { ReadFormSettings } from './settings';

/** A prompt set's name in the interface's language (the MemAgent sets keep theirs). */
function setLabel(id: PromptSetId): string {
  return id === 'app' || id === 'custom' ? i18n.t(`prompts.label.${id}`) : PROMPT_SET_LABELS[id];
}

/** What the worker holds of the MemAgent prompt files. */
export interface PromptFiles {
  status: PromptFileStatus[];
  sets: Partial<Record<FileSetId, PromptSet>>;
}

/** The prompt files as this browser has them, asked again whenever a run or a fetch may have changed them. */
export function usePromptFiles(): [PromptFiles | null, () => Promise<void>] {
  const [files, setFiles] = useState<PromptFiles | null>(null);
  const refresh = useCallback(async () => {
    const [status, sets] = await Promise.all([call(agent.promptFiles()), call(agent.promptSets())]);
    setFiles({ status, sets });
  }, []);
  useEffect(() => {
    // eslint-disable-next-line react-hooks/set-state-in-effect -- refresh sets state only after awaiting the worker, not within the effect (react#34905)
    void refresh().catch(() => undefined); // the form keeps what it showed; the next status refreshes it again
    // A run on a model fetches the file when it can: the form follows.
    return onRunEvent((e) => {
      // The form keeps what it showed; the next status refreshes it again.
      if (e.type === 'status') void refresh().catch(() => undefined);
    });
  }, [refresh]);
  return [files, refresh];
}

/** The set a read uses: the one chosen, else MemAgent (paper) for a model engine once its file is here. */
export function effectivePromptSet(settings: Pick<ReadFormSettings, 'promptSet'>, engineId: string, files: PromptFiles | null): PromptSetId {
  if (settings.promptSet) return settings.promptSet;
  return !engineUi(engineId).noModel && files?.sets.memagent ? 'memagent' : 'app';
}

/** The templates a set shows in the form; null for a MemAgent set whose file is not here. */
export function templatesOf(set: PromptSetId, settings: Pick<ReadFormSettings, 'templates'>, files: PromptFiles | null): PromptTemplates | null {
  if (set === 'custom') return settings.templates;
  if (set === 'app') return DEFAULT_TEMPLATES;
  return files?.sets[set]?.templates ?? null;
}

function describeFile(f: PromptFileStatus): string {
  const name = f.path.split('/').pop();
  if (f.have) {
    const when = f.savedAt ? `, ${new Intl.DateTimeFormat(i18n.language).format(f.savedAt)}` : '';
    const source = f.source?.startsWith('imported') ? f.source : i18n.t('prompts.fetchedFrom', { source: f.source });
    return i18n.t('prompts.fileHere', { name, sha: f.sha256.slice(0, 12), source, when });
  }
  return f.error ? i18n.t('prompts.fileMissingBecause', { name, error: f.error }) : i18n.t('prompts.fileMissing', { name });
}

interface Props {
  settings: ReadFormSettings;
  engineId: string;
  files: PromptFiles | null;
  refresh(): Promise<void>;
  onChange(change: Partial<ReadFormSettings>): void;
}

/**
 * The prompt set of the next read, and the MemAgent prompt files behind two
 * of them: where they come from, and how to get them where the app cannot
 * fetch them (offline, or a policy that blocks the host).
 */
export function PromptSetField({ settings, engineId, files, refresh, onChange }: Props) {
  const { t } = useTranslation();
  const ids = { set: useId(), base: useId(), hint: useId() };
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [base, setBase] = useState(settings.promptsBase);
  const effective = effectivePromptSet(settings, engineId, files);
  const { noModel } = engineUi(engineId);
  // An engine without a model reads no instructions: it needs no prompt file, whatever set is chosen.
  const fileSet: FileSetId | null = noModel
    ? null
    : effective === 'memagent' || effective === 'memagent-boxed'
      ? effective
      : settings.promptSet === null
        ? 'memagent'
        : null;
  const missing = fileSet !== null && files !== null && !files.sets[fileSet];

  // The worker fetches from the mirror kept here; it learns it at start and on each change.
  useEffect(() => {
    void call(agent.setPromptsBase(settings.promptsBase)).catch((e: Error) => setMessage({ text: e.message, error: true }));
  }, [settings.promptsBase]);

  const fetchNow = async () => {
    setBusy(true);
    setMessage(null);
    try {
      const status = await call(agent.fetchPromptFiles());
      await refresh();
      const failed = status.filter((f) => !f.have);
      setMessage(failed.length ? { text: failed.map(describeFile).join(' '), error: true } : { text: t('prompts.bothHere'), error: false });
    } catch (e) {
      setMessage({ text: (e as Error).message, error: true });
    } finally {
      setBusy(false);
    }
  };

  const importFile = async (file: File) => {
    setBusy(true);
    setMessage(null);
    try {
      const set = await call(agent.importPromptFile(file));
      await refresh();
      setMessage({ text: t('prompts.imported', { file: file.name, set: setLabel(set) }), error: false });
    } catch (e) {
      setMessage({ text: (e as Error).message, error: true });
    } finally {
      setBusy(false);
    }
  };

  const saveBase = () => {
    if (base.trim() !== settings.promptsBase) onChange({ promptsBase: base.trim() });
  };

  let hint: string;
  if (effective === 'custom') hint = t('prompts.hint.custom');
  else if (noModel) hint = t('prompts.hint.extractive');
  else if (effective === 'app') {
    hint = settings.promptSet === 'app' ? t('prompts.hint.app') : noModel ? t('prompts.hint.extractive') : t('prompts.hint.auto');
  } else {
    const file = files?.status.find((f) => f.set === effective);
    hint = files?.sets[effective]
      ? t('prompts.hint.file', { set: setLabel(effective), path: file?.path, sha: file?.sha256.slice(0, 12) })
      : t('prompts.hint.needsFile', { set: setLabel(effective) });
  }

  return (
    <div className="prompt-set">
      <div className="field">
        <label htmlFor={ids.set}>{t('prompts.set')}</label>
        <select
          id={ids.set}
          aria-describedby={ids.hint}
          value={settings.promptSet ?? 'auto'}
          onChange={(e) => onChange({ promptSet: e.target.value === 'auto' ? null : (e.target.value as PromptSetId) })}
        >
          <option value="auto">{t('prompts.auto')}</option>
          <option value="memagent">{PROMPT_SET_LABELS.memagent}</option>
          <option value="memagent-boxed">{PROMPT_SET_LABELS['memagent-boxed']}</option>
          <option value="app">{setLabel('app')}</option>
          {settings.promptSet === 'custom' && <option value="custom">{setLabel('custom')}</option>}
        </select>
        <p id={ids.hint} className="hint">
          {hint}
        </p>
      </div>
      <section aria-label={t('prompts.files')} className={missing ? 'warning' : undefined}>
        {/* What leaves the browser here, and why, said before the files' state: the book never does. */}
        <p className="hint">{t('prompts.about', { repo: MEMAGENT_REPOSITORY, commit: MEMAGENT_COMMIT.slice(0, 7) })}</p>
        {files?.status.map((f) => (
          <p key={f.set} className="hint">
            {describeFile(f)}
          </p>
        ))}
        {missing && (
          <p className="hint">
            {t('prompts.howBefore')} <code>{`${DEFAULT_PROMPTS_BASE}/${files?.status.find((f) => f.set === fileSet)?.path ?? ''}`}</code>{' '}
            {t('prompts.howAfter')}
          </p>
        )}
        <div className="row buttons">
          <button type="button" disabled={busy} onClick={() => void fetchNow()}>
            {t('prompts.fetch')}
          </button>
          <FilePicker accept=".py,text/x-python,text/plain" disabled={busy} onFiles={([file]) => void importFile(file!)}>
            {t('prompts.import')}
          </FilePicker>
        </div>
        <div className="field">
          <label htmlFor={ids.base}>{t('prompts.mirror')}</label>
          <input
            id={ids.base}
            type="url"
            placeholder={DEFAULT_PROMPTS_BASE}
            value={base}
            onChange={(e) => setBase(e.target.value)}
            onBlur={saveBase}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                saveBase();
              }
            }}
          />
        </div>
        {message && (
          <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : 'hint'}>
            {message.text}
          </p>
        )}
      </section>
    </div>
  );
}
