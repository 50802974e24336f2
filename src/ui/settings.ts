import { useState } from 'react';
import { DEFAULT_CHUNK_TOKENS, DEFAULT_MEMORY_TOKENS } from '../core/budget';
import type { PromptSetId } from '../core/prompt-sets';
import { i18n } from './i18n';
import { DEFAULT_TEMPLATES, PROBLEM_OPEN, type PromptTemplates, templateProblem } from '../core/prompts';

/** What a person sets for the next read; each run stores its own copy. */
export interface ReadSettings {
  chunkTokens: number;
  memoryTokens: number;
  temperature: number;
  topP: number;
  /** Empty for a random seed. */
  seed: number | null;
  /** The edited templates: used when `promptSet` is 'custom'. */
  templates: PromptTemplates;
  /** The prompt set the person chose; null until they choose (then each engine gets its default). */
  promptSet: PromptSetId | null;
  /** A mirror of the MemAgent repository's files at the pinned commit; empty for raw.githubusercontent.com. */
  promptsBase: string;
  /** Skim mode: read only the most relevant chunks. Off by default. */
  skim: boolean;
  /** Share of chunks chosen by rank, in percent (neighbours come on top). */
  skimPercent: number;
  /** Let entities newly written into memory add chunks as the run goes. */
  skimFollow: boolean;
  /** After the last planned chunk, read the earlier chunks those names point to. Off by default. */
  skimLookBack: boolean;
}

// The paper's evaluation samples at temperature 0.7, top_p 0.95.
export const DEFAULT_SETTINGS: ReadSettings = {
  chunkTokens: DEFAULT_CHUNK_TOKENS,
  memoryTokens: DEFAULT_MEMORY_TOKENS,
  temperature: 0.7,
  topP: 0.95,
  seed: null,
  templates: { ...DEFAULT_TEMPLATES },
  promptSet: null,
  promptsBase: '',
  skim: false,
  skimPercent: 5,
  skimFollow: true,
  skimLookBack: false,
};

const KEY = 'memagent-settings';

/** The app's templates as saved before the problem line took its trailing space: the default then, the default now. */
const EARLIER_DEFAULT = {
  update: DEFAULT_TEMPLATES.update.replace(`${PROBLEM_OPEN}\n`, '<problem>\n'),
  final: DEFAULT_TEMPLATES.final.replace(`${PROBLEM_OPEN}\n`, '<problem>\n'),
};

/** The settings kept in this browser, brought up to date. */
export function loadReadSettings(storage: Pick<Storage, 'getItem'> = localStorage): ReadSettings {
  try {
    const saved = JSON.parse(storage.getItem(KEY) ?? 'null') as Partial<ReadSettings> | null;
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
export function useReadSettings(): [ReadSettings, (change: Partial<ReadSettings>) => void] {
  const [settings, setSettings] = useState<ReadSettings>(() => loadReadSettings());
  const update = (change: Partial<ReadSettings>) =>
    setSettings((current) => {
      const next = { ...current, ...change };
      localStorage.setItem(KEY, JSON.stringify(next));
      return next;
    });
  return [settings, update];
}

/** A problem with the settings, said so that the person can fix it; null when they are fine. */
export function settingsProblem(s: ReadSettings): string | null {
  const whole = (n: number, min: number, max: number) => Number.isInteger(n) && n >= min && n <= max;
  if (!whole(s.chunkTokens, 100, 100_000)) return i18n.t('settings.problem.chunk');
  if (!whole(s.memoryTokens, 64, 8192)) return i18n.t('settings.problem.memory');
  if (!(s.temperature >= 0 && s.temperature <= 2)) return i18n.t('settings.problem.temperature');
  if (!(s.topP > 0 && s.topP <= 1)) return i18n.t('settings.problem.topP');
  if (s.seed !== null && !whole(s.seed, 0, 2 ** 31 - 1)) return i18n.t('settings.problem.seed');
  if (s.skim && !(s.skimPercent >= 1 && s.skimPercent <= 100)) return i18n.t('settings.problem.skim');
  return s.promptSet === 'custom' ? templateProblem(s.templates) : null;
}
