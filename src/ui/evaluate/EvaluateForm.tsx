import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_READ_SETTINGS } from '../../core/plan';
import { PROMPT_SET_LABELS, type PromptSetId } from '../../core/prompt-sets';
import { DEFAULT_TEMPLATES, type PromptTemplates } from '../../core/prompts';
import type { EngineInfo } from '../../engines/engine';
import { formatLength, parseLengths, STANDARD_LENGTHS } from '../../eval/lengths';
import { defaultMethod, METHOD_IDS, METHOD_LABELS, type MethodId } from '../../eval/method';
import type { ReadingMode } from '../../eval/sweep';
import { DEFAULT_EARLY_STOP } from '../../core/infmem/planner-state';
import { TASK_IDS, type TaskId } from '../../eval/tasks';
import type { EvaluationRequest } from '../../agent/protocol';
import type { DocumentRecord } from '../data';
import { engineUi } from '../engines';
import { EngineFields, useEngineChoice } from '../engines/EngineChoice';
import { effectivePromptSet, type PromptFiles, usePromptFiles } from '../PromptSetField';
import { useReadSettings } from '../settings';
import { formatNumber } from '../format';
import { i18n } from '../i18n';
import { FilePicker } from '../FilePicker';
import { READING_METHODS, type ReadingChoice, ReadingMethodFields } from './ReadingMethodFields';

interface Props {
  engines: readonly EngineInfo[];
  documents: readonly DocumentRecord[];
  busy: boolean;
  onStart(request: EvaluationRequest): void;
  onInvalid(message: string): void;
}

const DEFAULT_TASKS: readonly TaskId[] = ['niah_single_1', 'niah_multikey_1', 'vt', 'book_qa'];
const DEFAULT_LENGTHS: readonly number[] = [8 * 1024, 32 * 1024];

function toggle<T>(list: readonly T[], item: T, on: boolean): T[] {
  return on ? [...list, item] : list.filter((x) => x !== item);
}

/**
 * What a sweep needs: engine and model, tasks, lengths, samples per cell and
 * the reading settings; or, with dataset files chosen, the paper's method and
 * how many items of each file to read.
 */
export function EvaluateForm({ engines, documents, busy, onStart, onInvalid }: Props) {
  const { t } = useTranslation();
  const ids = {
    model: useId(),
    mode: useId(),
    about: useId(),
    haystack: useId(),
    more: useId(),
    samples: useId(),
    seed: useId(),
    chunk: useId(),
    memory: useId(),
    dataset: useId(),
    datasetHint: useId(),
    method: useId(),
    methodHint: useId(),
    prompts: useId(),
    promptsHint: useId(),
    items: useId(),
  };
  // The engines and their settings forms as the Read form has them; a sweep sends the config a read would.
  const choice = useEngineChoice(engines);
  const { engine, config: engineConfig } = choice;
  const [mode, setMode] = useState<ReadingMode>('memory');
  const [tasks, setTasks] = useState<TaskId[]>([...DEFAULT_TASKS]);
  const [lengths, setLengths] = useState<number[]>([...DEFAULT_LENGTHS]);
  const [moreLengths, setMoreLengths] = useState('');
  const [samples, setSamples] = useState(5);
  const [seed, setSeed] = useState(0);
  const [chunkTokens, setChunkTokens] = useState(DEFAULT_READ_SETTINGS.chunkTokens);
  const [memoryTokens, setMemoryTokens] = useState(DEFAULT_READ_SETTINGS.memoryTokens);
  const [documentId, setDocumentId] = useState('');
  const [datasetFiles, setDatasetFiles] = useState<File[]>([]);
  // The prompt set as a read chooses it, starting from the one chosen in Settings; the method follows it until one is picked.
  const [readSettings, changeReadSettings] = useReadSettings();
  const [promptFiles] = usePromptFiles();
  const [promptSet, setPromptSet] = useState<PromptSetId | null>(readSettings.promptSet);
  const [chosenMethod, setChosenMethod] = useState<MethodId | null>(null);
  const [itemsPerFile, setItemsPerFile] = useState('');
  // InfMem's thinking starts as the Read form has it (on unless turned off there).
  const [readingChoice, setReadingChoice] = useState<ReadingChoice>(() => ({
    reading: 'memagent',
    earlyStop: DEFAULT_EARLY_STOP,
    thinking: readSettings.thinking,
  }));
  const { reading, earlyStop, thinking } = readingChoice;
  const dataset = datasetFiles.length > 0;
  // MemAgent's prompt set, method and sizes matter only where MemAgent reads.
  const memagent = reading !== 'infmem';
  const effectiveSet = effectivePromptSet({ promptSet }, engine?.id ?? '', promptFiles);
  const method = chosenMethod ?? methodFor(effectiveSet, readSettings.templates);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const engineProblem = engine && engineUi(engine.id).configProblem?.(engineConfig);
    if (engineProblem) return onInvalid(engineProblem);
    const infmem = (dataset || mode === 'memory') && reading !== 'memagent';
    if (infmem && (!Number.isInteger(earlyStop) || earlyStop < 1)) return onInvalid(t('evaluate.problem.earlyStop'));
    const methods = infmem ? { methods: READING_METHODS[reading], earlyStop, thinking } : {};
    if (dataset) {
      const items = itemsPerFile.trim() === '' ? undefined : Number(itemsPerFile);
      if (items !== undefined && (!Number.isInteger(items) || items < 1)) return onInvalid(t('evaluate.problem.items'));
      return onStart({
        ...methods,
        engineId: engine?.id ?? '',
        engineConfig,
        mode: 'memory',
        tasks: [],
        lengths: [],
        samples: 1,
        chunkTokens,
        memoryTokens,
        dataset: {
          files: datasetFiles,
          // Unless picked, the method is the one the set the worker resolves asks for (the file may arrive meanwhile).
          ...(chosenMethod && { method: chosenMethod }),
          prompts: promptSet ?? 'auto',
          ...(promptSet === 'custom' && { templates: readSettings.templates }),
          ...(items !== undefined && { itemsPerFile: items }),
        },
      });
    }
    let all = lengths;
    if (moreLengths.trim()) {
      try {
        all = [...lengths, ...parseLengths(moreLengths)];
      } catch (err) {
        return onInvalid((err as Error).message);
      }
    }
    if (tasks.length === 0) return onInvalid(t('evaluate.problem.task'));
    if (all.length === 0) return onInvalid(t('evaluate.problem.length'));
    if (!Number.isInteger(samples) || samples < 1 || samples > 1000) return onInvalid(t('evaluate.problem.samples'));
    if (!Number.isInteger(seed) || seed < 0) return onInvalid(t('evaluate.problem.seed'));
    onStart({
      ...methods,
      engineId: engine?.id ?? '',
      engineConfig,
      mode,
      // In the order the task list shows them, whatever order they were ticked in.
      tasks: TASK_IDS.filter((id) => tasks.includes(id)),
      lengths: [...new Set(all)].sort((a, b) => a - b),
      samples,
      seed,
      chunkTokens,
      memoryTokens,
      ...(documentId && { documentId }),
    });
  };

  const readingFields = (
    <ReadingMethodFields
      choice={readingChoice}
      onChange={(change) => setReadingChoice((now) => ({ ...now, ...change }))}
      engineId={engine?.id ?? ''}
      files={{ settings: readSettings, onChange: changeReadSettings }}
    />
  );
  const cells = tasks.length * (lengths.length + (moreLengths.trim() ? moreLengths.split(',').length : 0));
  return (
    <form className="read-form eval-form" onSubmit={submit}>
      <div className="field">
        <EngineFields engines={engines} choice={choice} />
      </div>
      {engine && engineUi(engine.id).noModel && (
        <div className="field">
          <label htmlFor={ids.model}>{t('webllm.model')}</label>
          <select id={ids.model} value="" disabled>
            <option value="">{t('evaluate.noModel')}</option>
          </select>
        </div>
      )}
      <div className="field">
        <label htmlFor={ids.dataset}>{t('evaluate.dataset')}</label>
        <FilePicker id={ids.dataset} accept=".json,.jsonl,application/json" multiple describedBy={ids.datasetHint} onFiles={setDatasetFiles}>
          {dataset ? t('evaluate.chooseOther') : t('evaluate.choose')}
        </FilePicker>
        <p className="hint" id={ids.datasetHint}>
          {t('evaluate.datasetHint')}
        </p>
        {dataset && (
          <>
            <ul className="dataset-files">
              {datasetFiles.map((f) => (
                <li key={f.name}>
                  {f.name} <span className="hint">({formatBytes(f.size)})</span>
                </li>
              ))}
            </ul>
            <button type="button" onClick={() => setDatasetFiles([])}>
              {t('evaluate.clear')}
            </button>
          </>
        )}
      </div>
      {dataset && readingFields}
      {dataset && memagent && (
        <>
          <div className="field">
            <label htmlFor={ids.prompts}>{t('prompts.set')}</label>
            <select
              id={ids.prompts}
              aria-describedby={ids.promptsHint}
              value={promptSet ?? 'auto'}
              onChange={(e) => setPromptSet(e.target.value === 'auto' ? null : (e.target.value as PromptSetId))}
            >
              <option value="auto">{t('evaluate.promptsAuto')}</option>
              <option value="memagent">{PROMPT_SET_LABELS.memagent}</option>
              <option value="memagent-boxed">{PROMPT_SET_LABELS['memagent-boxed']}</option>
              <option value="app">{t('prompts.label.app')}</option>
              {readSettings.promptSet === 'custom' && <option value="custom">{t('prompts.label.custom')}</option>}
            </select>
            <p className="hint" id={ids.promptsHint}>
              {promptSetHint(promptSet, effectiveSet, engine?.id ?? '', promptFiles)}
            </p>
          </div>
          <div className="field">
            <label htmlFor={ids.method}>{t('evaluate.method')}</label>
            <select id={ids.method} aria-describedby={ids.methodHint} value={method} onChange={(e) => setChosenMethod(e.target.value as MethodId)}>
              {METHOD_IDS.map((m) => (
                <option key={m} value={m}>
                  {METHOD_LABELS[m]}
                </option>
              ))}
            </select>
            <p className="hint" id={ids.methodHint}>
              {chosenMethod ? '' : `${t('evaluate.methodAsked')} `}
              {t('evaluate.methodHint')}
            </p>
          </div>
          <div className="field">
            <label htmlFor={ids.items}>{t('evaluate.items')}</label>
            <input
              id={ids.items}
              type="number"
              min={1}
              placeholder={t('evaluate.all')}
              value={itemsPerFile}
              onChange={(e) => setItemsPerFile(e.target.value)}
            />
          </div>
        </>
      )}
      {!dataset && (
        <>
          <div className="field">
            <label htmlFor={ids.mode}>{t('evaluate.mode')}</label>
            <select id={ids.mode} value={mode} onChange={(e) => setMode(e.target.value as ReadingMode)}>
              <option value="memory">{t('evaluate.modeMemory')}</option>
              <option value="full">{t('evaluate.modeFull')}</option>
            </select>
            <p className="hint">{t(mode === 'full' ? 'evaluate.modeFullHint' : 'evaluate.modeMemoryHint')}</p>
            {mode === 'full' && <p className="hint">{t('evaluate.fullHint')}</p>}
          </div>
          {mode === 'memory' && readingFields}
          <fieldset className="checks task-checks">
            <legend>{t('evaluate.tasks')}</legend>
            {TASK_IDS.map((id) => (
              <label key={id}>
                <input
                  type="checkbox"
                  checked={tasks.includes(id)}
                  aria-describedby={`${ids.about}-${id}`}
                  onChange={(e) => setTasks(toggle(tasks, id, e.target.checked))}
                />{' '}
                {t(`tasks.${id}.name`)}{' '}
                <span className="task-id" aria-hidden="true">
                  {id}
                </span>
              </label>
            ))}
            <details className="task-about">
              <summary>{t('evaluate.tasksAbout')}</summary>
              <dl>
                {TASK_IDS.map((id) => (
                  <div key={id}>
                    <dt>
                      {t(`tasks.${id}.name`)} <span className="task-id">{id}</span>
                    </dt>
                    <dd id={`${ids.about}-${id}`}>{t(`tasks.${id}.about`)}</dd>
                  </div>
                ))}
              </dl>
            </details>
          </fieldset>
          <fieldset className="checks">
            <legend>{t('evaluate.lengths')}</legend>
            {STANDARD_LENGTHS.map((l) => (
              <label key={l}>
                <input type="checkbox" checked={lengths.includes(l)} onChange={(e) => setLengths(toggle(lengths, l, e.target.checked))} /> {formatLength(l)}
              </label>
            ))}
          </fieldset>
          <div className="field">
            <label htmlFor={ids.more}>{t('evaluate.more')}</label>
            <input id={ids.more} type="text" placeholder={t('evaluate.morePlaceholder')} value={moreLengths} onChange={(e) => setMoreLengths(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={ids.haystack}>{t('evaluate.haystack')}</label>
            <select id={ids.haystack} value={documentId} onChange={(e) => setDocumentId(e.target.value)}>
              <option value="">{t('evaluate.generated')}</option>
              {documents.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
            </select>
            <p className="hint">{t('evaluate.haystackHint')}</p>
          </div>
          <div className="row">
            <div className="field">
              <label htmlFor={ids.samples}>{t('evaluate.samples')}</label>
              <input id={ids.samples} type="number" min={1} max={1000} value={samples} onChange={(e) => setSamples(e.target.valueAsNumber)} />
            </div>
            <div className="field">
              <label htmlFor={ids.seed}>{t('settings.seed')}</label>
              <input id={ids.seed} type="number" min={0} value={seed} onChange={(e) => setSeed(e.target.valueAsNumber)} />
            </div>
          </div>
        </>
      )}
      {(mode === 'memory' || dataset) && memagent && (
        // Any whole number in range: a step of 100 (or 64) had the browser refuse 150 (or 1,000) without a word from the app.
        <div className="row">
          <div className="field">
            <label htmlFor={ids.chunk}>{t('settings.chunk')}</label>
            <input id={ids.chunk} type="number" min={100} max={100000} step={1} value={chunkTokens} onChange={(e) => setChunkTokens(e.target.valueAsNumber)} />
          </div>
          <div className="field">
            <label htmlFor={ids.memory}>{t('settings.memory')}</label>
            <input id={ids.memory} type="number" min={64} max={8192} step={1} value={memoryTokens} onChange={(e) => setMemoryTokens(e.target.valueAsNumber)} />
          </div>
        </div>
      )}
      <p className="hint">
        {dataset
          ? t('evaluate.filesTimes', { count: datasetFiles.length, items: itemsPerFile.trim() ? itemsPerFile : t('evaluate.all') })
          : t('evaluate.cellsTimes', { count: cells, samples: Number.isInteger(samples) ? samples : '?' })}
      </p>
      <button type="submit" disabled={busy}>
        {t('evaluate.start')}
      </button>
    </form>
  );
}

/** The method that reads the answers a set asks for: recurrent for MemAgent (paper), recurrent-boxed for the boxed set and this app's wording. */
function methodFor(set: PromptSetId, edited: PromptTemplates): MethodId {
  if (set === 'memagent') return 'recurrent';
  if (set === 'memagent-boxed') return 'recurrent-boxed';
  return defaultMethod(set === 'custom' ? edited : DEFAULT_TEMPLATES);
}

function promptSetHint(chosen: PromptSetId | null, effective: PromptSetId, engineId: string, files: PromptFiles | null): string {
  if (effective === 'memagent' || effective === 'memagent-boxed') {
    const file = files?.status.find((f) => f.set === effective);
    return files?.sets[effective]
      ? i18n.t('prompts.hint.file', { set: PROMPT_SET_LABELS[effective], path: file?.path, sha: file?.sha256.slice(0, 12) })
      : i18n.t('evaluate.needsFile', { set: PROMPT_SET_LABELS[effective] });
  }
  if (effective === 'custom') return i18n.t('evaluate.customHint');
  if (chosen === 'app') return i18n.t('prompts.hint.app');
  return engineUi(engineId).noModel ? i18n.t('prompts.hint.extractive') : i18n.t('evaluate.autoHint');
}

function formatBytes(n: number): string {
  if (n < 1024 * 1024) return i18n.t('units.kb', { n: formatNumber(Math.max(1, Math.round(n / 1024))) });
  return i18n.t('units.mb', { n: formatNumber(n / 1024 / 1024, 1) });
}
