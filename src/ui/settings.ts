import { useState } from 'react';
import { DEFAULT_READ_SETTINGS, type InfmemMethod, infmemProblem, type ReadSettingName, type ReadSettings, readSettingsProblem } from '../core/plan';
import type { PromptSetId } from '../core/prompt-sets';
import { i18n } from './i18n';
import { DEFAULT_EARLY_STOP } from '../core/infmem/planner-state';
import { DEFAULT_TEMPLATES, PROBLEM_OPEN, type PromptTemplates, templateProblem } from '../core/prompts';

/** What a person sets for the next read: the read settings (core/plan.ts) and the form's own choices; each run stores its own copy. */
export interface ReadFormSettings extends Omit<ReadSettings, 'seed'> {
  /** Empty (null, which JSON keeps) for a random seed. */
  seed: number | null;
  /** The edited templates: used when `promptSet` is 'custom'. */
  templates: PromptTemplates;
  /** The prompt set the person chose; null until they choose (then each engine gets its default). */
  promptSet: PromptSetId | null;
  /** A mirror of the MemAgent repository's files at the pinned commit; empty for raw.githubusercontent.com. */
  promptsBase: string;
  /** Mirrors of InfMem's two pinned files (its evaluation file, Qwen-Agent's function-call words); empty for raw.githubusercontent.com. */
  infmemBases: { infmem: string; fncall: string };
  /** Skim mode: read only the most relevant chunks. Off by default. */
  skim: boolean;
  /** Share of chunks chosen by rank, in percent (neighbours come on top). */
  skimPercent: number;
  /** Let entities newly written into memory add chunks as the run goes. */
  skimFollow: boolean;
  /** After the last planned chunk, read the earlier chunks those names point to. Off by default. */
  skimLookBack: boolean;
  /** How the book is read: MemAgent's loop (the default), or InfMem's, which plans, retrieves and may stop early. */
  method: 'memagent' | 'infmem';
  /** InfMem: votes to stop in a row that end the read. */
  earlyStop: number;
  /** InfMem: two-stage thinking for a model's calls. */
  thinking: boolean;
}

export const DEFAULT_SETTINGS: ReadFormSettings = {
  ...DEFAULT_READ_SETTINGS,
  seed: null,
  templates: { ...DEFAULT_TEMPLATES },
  promptSet: null,
  promptsBase: '',
  infmemBases: { infmem: '', fncall: '' },
  skim: false,
  skimPercent: 5,
  skimFollow: true,
  skimLookBack: false,
  method: 'memagent',
  earlyStop: DEFAULT_EARLY_STOP,
  thinking: true,
};

const KEY = 'memagent-settings';

/** The app's templates as saved before the problem line took its trailing space: the default then, the default now. */
const EARLIER_DEFAULT = {
  update: DEFAULT_TEMPLATES.update.replace(`${PROBLEM_OPEN}\n`, '<problem>\n'),
  final: DEFAULT_TEMPLATES.final.replace(`${PROBLEM_OPEN}\n`, '<problem>\n'),
};

/** The settings kept in this browser, brought up to date. */
export function loadReadSettings(storage: Pick<Storage, 'getItem'> = localStorage): ReadFormSettings {
  try {
    const saved = JSON.parse(storage.getItem(KEY) ?? 'null') as Partial<ReadFormSettings> | null;
    if (!saved) return DEFAULT_SETTINGS;
    const templates = { ...DEFAULT_SETTINGS.templates, ...saved.templates };
    const unchanged = [DEFAULT_TEMPLATES, EARLIER_DEFAULT].some((d) => d.update === templates.update && d.final === templates.final);
    // Settings saved before prompt sets: templates someone edited stay theirs, as edited templates.
    const promptSet = saved.promptSet !== undefined ? saved.promptSet : unchanged ? null : 'custom';
    return { ...DEFAULT_SETTINGS, ...saved, templates: unchanged ? { ...DEFAULT_TEMPLATES } : templates, promptSet };
  } catch {
    return DEFAULT_SETTINGS;
  }
}

/** Settings kept in this browser between visits. */
export function useReadSettings(): [ReadFormSettings, (change: Partial<ReadFormSettings>) => void] {
  const [settings, setSettings] = useState<ReadFormSettings>(() => loadReadSettings());
  const update = (change: Partial<ReadFormSettings>) =>
    setSettings((current) => {
      const next = { ...current, ...change };
      localStorage.setItem(KEY, JSON.stringify(next));
      return next;
    });
  return [settings, update];
}

/** Which message of the settings panel says what is wrong with each read setting. */
const PROBLEM_KEY = { chunkTokens: 'chunk', memoryTokens: 'memory', temperature: 'temperature', topP: 'topP', seed: 'seed' } as const satisfies Record<
  ReadSettingName,
  string
>;

/** A number field of the settings panel. */
export type NumericSetting = 'chunkTokens' | 'memoryTokens' | 'temperature' | 'topP' | 'skimPercent' | 'earlyStop';

/** The InfMem method the form asks for; undefined for MemAgent's read. */
export function methodOf(s: Pick<ReadFormSettings, 'method' | 'earlyStop' | 'thinking'>): InfmemMethod | undefined {
  return s.method === 'infmem' ? { kind: 'infmem', earlyStop: s.earlyStop, thinking: s.thinking } : undefined;
}

/** What is wrong with one number field as typed (an emptied one holds NaN), said beside it; null when Read would take it. */
export function fieldProblem(s: ReadFormSettings, field: NumericSetting | 'seed'): string | null {
  if (field === 'earlyStop') return infmemProblem({ kind: 'infmem', earlyStop: s.earlyStop, thinking: s.thinking }) ? i18n.t('infmem.earlyStopProblem') : null;
  if (field === 'skimPercent') return s.skimPercent >= 1 && s.skimPercent <= 100 ? null : i18n.t('settings.problem.skim');
  return readSettingsProblem({ [field]: s[field] }) ? i18n.t(`settings.problem.${PROBLEM_KEY[field]}`) : null;
}

/** A problem with the settings, said so that the person can fix it; null when they are fine. */
export function settingsProblem(s: ReadFormSettings): string | null {
  const wrong = readSettingsProblem(s);
  if (wrong) return i18n.t(`settings.problem.${PROBLEM_KEY[wrong.setting]}`);
  const method = methodOf(s);
  if (method && infmemProblem(method)) return i18n.t('infmem.earlyStopProblem');
  if (s.skim && !method && !(s.skimPercent >= 1 && s.skimPercent <= 100)) return i18n.t('settings.problem.skim');
  return s.promptSet === 'custom' ? templateProblem(s.templates) : null;
}
