import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { DEFAULT_PROMPTS_BASE, type FileSetId, PROMPT_SET_LABELS, type PromptSet, type PromptSetId } from '../core/prompt-sets';
import { DEFAULT_TEMPLATES, type PromptTemplates } from '../core/prompts';
import type { PromptFileStatus } from '../runner/prompt-files';
import { agent, call, onRunEvent } from './client';
import type { ReadSettings } from './settings';

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
    void refresh().catch(() => undefined);
    // A run on a model fetches the file when it can: the form follows.
    return onRunEvent((e) => {
      if (e.type === 'status') void refresh().catch(() => undefined);
    });
  }, [refresh]);
  return [files, refresh];
}

/** The set a read uses: the one chosen, else MemAgent (paper) for a model engine once its file is here. */
export function effectivePromptSet(settings: Pick<ReadSettings, 'promptSet'>, engineId: string, files: PromptFiles | null): PromptSetId {
  if (settings.promptSet) return settings.promptSet;
  return engineId !== 'extractive' && files?.sets.memagent ? 'memagent' : 'app';
}

/** The templates a set shows in the form; null for a MemAgent set whose file is not here. */
export function templatesOf(set: PromptSetId, settings: Pick<ReadSettings, 'templates'>, files: PromptFiles | null): PromptTemplates | null {
  if (set === 'custom') return settings.templates;
  if (set === 'app') return DEFAULT_TEMPLATES;
  return files?.sets[set]?.templates ?? null;
}

function describeFile(f: PromptFileStatus): string {
  const name = f.path.split('/').pop();
  if (f.have) {
    const when = f.savedAt ? `, ${new Date(f.savedAt).toLocaleDateString()}` : '';
    return `${name}: here (SHA-256 ${f.sha256.slice(0, 12)}…, ${f.source?.startsWith('imported') ? f.source : `fetched from ${f.source}`}${when}).`;
  }
  return `${name}: not in this browser yet${f.error ? ` — ${f.error}` : '.'}`;
}

interface Props {
  settings: ReadSettings;
  engineId: string;
  files: PromptFiles | null;
  refresh(): Promise<void>;
  onChange(change: Partial<ReadSettings>): void;
}

/**
 * The prompt set of the next read, and the MemAgent prompt files behind two
 * of them: where they come from, and how to get them where the app cannot
 * fetch them (offline, or a policy that blocks the host).
 */
export function PromptSetField({ settings, engineId, files, refresh, onChange }: Props) {
  const ids = { set: useId(), base: useId(), hint: useId() };
  const picker = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [base, setBase] = useState(settings.promptsBase);
  const effective = effectivePromptSet(settings, engineId, files);
  const fileSet: FileSetId | null = effective === 'memagent' || effective === 'memagent-boxed' ? effective : settings.promptSet === null && engineId !== 'extractive' ? 'memagent' : null;
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
      setMessage(failed.length ? { text: failed.map(describeFile).join(' '), error: true } : { text: 'Both prompt files are here, checked against their pinned SHA-256.', error: false });
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
      setMessage({ text: `${file.name} is ${PROMPT_SET_LABELS[set]}'s file: its SHA-256 is the pinned one, and it is kept in this browser.`, error: false });
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
  if (effective === 'custom') hint = 'Your edited templates. Answers are read leniently (\\boxed{} or "the answer is").';
  else if (effective === 'app') {
    hint =
      settings.promptSet === 'app'
        ? "This app's own instruction sentences, in the layout the MemAgent checkpoints were trained on."
        : engineId === 'extractive'
          ? "The extractive engine reads no instructions: this app's wording."
          : "This app's wording, until MemAgent (paper)'s prompt file is in this browser; then the paper's own prompts.";
  } else {
    const file = files?.status.find((f) => f.set === effective);
    hint = files?.sets[effective]
      ? `${PROMPT_SET_LABELS[effective]}: the MemAgent checkpoints' own prompts, read from ${file?.path} at the pinned commit (SHA-256 ${file?.sha256.slice(0, 12)}…).`
      : `${PROMPT_SET_LABELS[effective]} needs its prompt file, which is not in this browser yet: Read will try to fetch it.`;
  }

  return (
    <div className="prompt-set">
      <div className="field">
        <label htmlFor={ids.set}>Prompt set</label>
        <select
          id={ids.set}
          aria-describedby={ids.hint}
          value={settings.promptSet ?? 'auto'}
          onChange={(e) => onChange({ promptSet: e.target.value === 'auto' ? null : (e.target.value as PromptSetId) })}
        >
          <option value="auto">Default: MemAgent (paper) once its file is here</option>
          <option value="memagent">{PROMPT_SET_LABELS.memagent}</option>
          <option value="memagent-boxed">{PROMPT_SET_LABELS['memagent-boxed']}</option>
          <option value="app">{PROMPT_SET_LABELS.app}</option>
          {settings.promptSet === 'custom' && <option value="custom">{PROMPT_SET_LABELS.custom}</option>}
        </select>
        <p id={ids.hint} className="hint">
          {hint}
        </p>
      </div>
      <section aria-label="Prompt files" className={missing ? 'warning' : undefined}>
        {files?.status.map((f) => (
          <p key={f.set} className="hint">
            {describeFile(f)}
          </p>
        ))}
        {missing && (
          <p className="hint">
            The app fetches the MemAgent files from the MemAgent repository at a pinned commit whenever it is online and fetching anyway (a
            model download, a server connection, a read). Offline, or where a network policy blocks raw.githubusercontent.com: download{' '}
            <code>{`${DEFAULT_PROMPTS_BASE}/${files?.status.find((f) => f.set === fileSet)?.path ?? ''}`}</code>{' '}
            elsewhere and add it with Import prompt file, or serve the files from a mirror (its host must be allowed by the app's Content
            Security Policy). The command line takes the same file with --prompts-file.
          </p>
        )}
        <div className="row buttons">
          <button type="button" disabled={busy} onClick={() => void fetchNow()}>
            Fetch prompt files
          </button>
          <button type="button" disabled={busy} onClick={() => picker.current?.click()}>
            Import prompt file
          </button>
          <input
            ref={picker}
            type="file"
            accept=".py,text/x-python,text/plain"
            hidden
            tabIndex={-1}
            aria-hidden="true"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              e.currentTarget.value = '';
              if (file) void importFile(file);
            }}
          />
        </div>
        <div className="field">
          <label htmlFor={ids.base}>Prompt file mirror</label>
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
