import { needsModel } from '../engines/infos';
import type { PromptSetId } from '../core/prompt-sets';
import { modelKey } from '../core/estimate';
import type { RunRecord } from './data';
import type { ReadFormSettings } from './settings';

/** A run opened on the Read page, as its form shows it; `key` is new each time a run is opened. */
export interface RunOnForm {
  key: number;
  run: RunRecord;
  /** Every question read together with the run's, in the order they were asked. */
  questions: string[];
}

/** What a run reads, as Compare and the Library tell runs over the same books apart. */
function readsOf(run: RunRecord): string {
  return run.books ? run.books.map((b) => b.documentId).join('|') : run.documentId;
}

/** The plan of a read, which every run of one Read shares: all but the seed, which is each question's own (core/plan.ts questionSeed). */
function planOf(run: RunRecord): string {
  const { seed: _, ...settings } = run.settings;
  return JSON.stringify([readsOf(run), run.engineId, settings, run.templates, run.skim?.keep ?? null, run.method ?? null]);
}

/**
 * The questions read together with `run`, in the order they were asked. The
 * runs of one Read are planned together (runs/plan.ts): the same books, engine
 * and plan, created a millisecond apart, the first question latest. Runs do not
 * store that they belong together, so this is the one place that tells.
 */
export function questionsOf(run: RunRecord, runs: readonly RunRecord[]): string[] {
  const plan = planOf(run);
  const byTime = new Map(runs.filter((r) => r.id !== run.id && planOf(r) === plan).map((r) => [r.createdAt, r]));
  const together = [run];
  for (let t = run.createdAt + 1; byTime.has(t); t++) together.unshift(byTime.get(t)!);
  for (let t = run.createdAt - 1; byTime.has(t); t--) together.push(byTime.get(t)!);
  return together.map((r) => r.question);
}

/**
 * The Read form's settings that make the read `run` was: its sizes as asked,
 * sampling, skim and prompt set. A prompt choice left to the engine stays so
 * where the run used the engine's own; a set that stood in for the one asked
 * (a file not in the browser yet) leaves the form's choice as it is.
 */
export function formSettingsOf(run: RunRecord, promptSet: PromptSetId | null): Partial<ReadFormSettings> {
  const s = run.settings;
  const settings: Partial<ReadFormSettings> = {
    chunkTokens: s.requestedChunkTokens ?? s.chunkTokens,
    memoryTokens: s.memoryTokens,
    temperature: s.temperature,
    topP: s.topP,
    seed: s.seed ?? null,
    skim: !!run.skim,
    method: run.method ? 'infmem' : 'memagent',
    ...(run.method && { earlyStop: run.method.earlyStop, thinking: run.method.thinking }),
  };
  if (run.skim) {
    // Back to the percent the form took (keep = percent / 100), without a float's tail.
    settings.skimPercent = Math.round(run.skim.keep * 10_000) / 100;
    settings.skimFollow = run.skim.followMemory;
    settings.skimLookBack = !!run.skim.lookBack;
  }
  const set = run.prompts?.set;
  if (!set || run.prompts?.note) return settings;
  if (set === 'custom') return { ...settings, promptSet: 'custom', templates: { ...run.templates } };
  const engineDefault = needsModel(run.engineId) ? 'memagent' : 'app';
  return promptSet === null && set === engineDefault ? settings : { ...settings, promptSet: set };
}

/** Where the Read form's books came from: the person chose them, or the form took them from the run shown. */
export type BookOrigin = 'chosen' | 'run';

/**
 * The books to keep for the next visit: those the person chose on the form
 * where they are not the run shown's, which a reload would otherwise put back
 * on the form in their place. Null: nothing to keep (the form may follow the run).
 */
export function choiceToKeep(bookIds: readonly string[], origin: BookOrigin | null, run: RunRecord | null): string[] | null {
  if (origin !== 'chosen' || bookIds.length === 0) return null;
  return run && readsOf(run) === bookIds.join('|') ? null : [...bookIds];
}

/** A read the form would start: its books in order, engine, model (as `modelKey` names it) and chunk size. */
export interface PlannedRead {
  bookIds: readonly string[];
  engineId: string;
  model: string;
  chunkTokens: number;
}

/**
 * How many chunks a read would take, where a finished cut of the same books
 * by the same engine and model at the same chunk size says it exactly (the
 * chunker cuts a book the same way each time); null where only an estimate
 * can say. A run whose budget cut its chunks smaller does not count.
 */
export function knownChunks(runs: readonly RunRecord[], read: PlannedRead): number | null {
  const reads = read.bookIds.join('|');
  for (const run of runs) {
    const s = run.settings;
    if (readsOf(run) !== reads || run.engineId !== read.engineId || modelKey(run.engineConfig) !== read.model) continue;
    if (s.chunkTokens !== read.chunkTokens || (s.requestedChunkTokens ?? s.chunkTokens) !== read.chunkTokens || run.chunking) continue;
    // A skim stores the chunks it reads; the book's whole count it was cut into is kept beside them.
    const total = run.skim ? run.skim.totalChunks : run.chunks.length;
    if (total > 0) return total;
  }
  return null;
}
