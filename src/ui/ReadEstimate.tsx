import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { besideMs, besideSteps, type BesideSteps, estimateRead, modelKey, readSize, skimmedChunks, type StepSample } from '../core/estimate';
import { DEFAULT_SKIM } from '../core/skim';
import { followBudget } from '../core/skim-follow';
import type { EngineConfig } from '../engines/engine';
import { type DocumentRecord, store } from './data';
import { onRunEvent } from './client';
import { engineUi, type SpeedApart } from './engines';
import { formatDuration, formatNumber, formatSpeed } from './format';
import { i18n } from './i18n';
import { knownChunks } from './run-form';
import { estimatedSettings, infmemNote } from './infmem-estimate';
import { type ReadFormSettings, settingsProblem } from './settings';
import { sentences } from './sentences';
import type { RunRecord } from './data';

interface Props {
  /** The books to read: one, or a set read as one stream. */
  books: readonly DocumentRecord[];
  engineId: string;
  /** The chosen engine's configuration: which model, so that only its own measurements count. */
  engineConfig?: EngineConfig;
  settings: ReadFormSettings;
  /** Hears the expected time of the read in milliseconds, or null while there is none. */
  onEstimate?(ms: number | null): void;
  /** The engine cannot run in this browser: no time is expected, and nothing is offered to measure it. */
  cannotRun?: boolean;
  /** Questions the read asks (default 1): each writes its own memory at every chunk, so each is a step of its own. */
  questions?: number;
}

const NO_CONFIG: EngineConfig = {};

/** The sentences that give the read's chunk count: each says "about" where the count is estimated, and has a twin for a count known exactly. */
type ChunkSentence = 'aboutChunks' | 'noModel' | 'full' | 'fullSteps' | 'skim' | 'skimSteps';

/**
 * Expected time of the next read, before it starts: from this engine's past
 * steps with this model where there are any, else from the model's measured
 * reading and writing speeds. It says which.
 */
export function ReadEstimate(props: Props) {
  const { useSpeedApart = noSpeedApart, notMeasured = notMeasuredYet, noModel = false } = engineUi(props.engineId);
  // Each engine measures its speed its own way (its own hooks): a change of engine starts afresh.
  return <EngineEstimate key={props.engineId} {...props} useSpeedApart={useSpeedApart} notMeasured={notMeasured} noModel={noModel} />;
}

const notMeasuredYet = () => i18n.t('estimate.notMeasured');

/** No speed measured apart from reads: only past steps count. */
function noSpeedApart(): SpeedApart | undefined {
  return undefined;
}

interface EngineEstimateProps extends Props {
  /** Where the chosen engine's speed was measured apart from reads (the engine's own hook). */
  useSpeedApart(config: EngineConfig): SpeedApart | undefined;
  /** What to say while nothing is measured. */
  notMeasured(): string;
  /** The engine reads without a model: with nothing measured yet, it still takes only moments. */
  noModel: boolean;
}

function EngineEstimate(props: EngineEstimateProps) {
  const { books, engineId, engineConfig = NO_CONFIG, settings: asked, onEstimate, useSpeedApart, notMeasured, noModel, cannotRun, questions = 1 } = props;
  const { t } = useTranslation();
  const [samples, setSamples] = useState<StepSample[] | null>(null);
  const [beside, setBeside] = useState<BesideSteps | undefined>(undefined);
  const [runs, setRuns] = useState<readonly RunRecord[]>([]);
  const model = modelKey(engineConfig);
  const settings = estimatedSettings(asked);
  const apart = useSpeedApart(engineConfig);

  useEffect(() => {
    let alive = true;
    const measure = async () => {
      const db = await store;
      const [steps, reads, past] = await Promise.all([db.recentSteps(engineId, model), db.recentReads(engineId, model), db.listRuns()]);
      if (!alive) return;
      setSamples(steps);
      setBeside(besideSteps(reads));
      setRuns(past);
    };
    void measure();
    // A run that ends adds measurements.
    const unsubscribe = onRunEvent((e) => {
      if (e.type === 'status' && e.status !== 'running') void measure();
    });
    return () => {
      alive = false;
      unsubscribe();
    };
  }, [engineId, model]);

  // A past read of these books cut the same way says the count exactly; else it is estimated, and said to be.
  const known = knownChunks(runs, { bookIds: books.map((b) => b.id), engineId, model, chunkTokens: settings.chunkTokens });
  // Nothing is expected of a read the form would refuse (its fields say why).
  const plan = books.length && samples !== null && !settingsProblem(settings) ? planOf(books, settings, { samples, apart, beside, known }, questions) : null;
  const say = (sentence: ChunkSentence) => (known === null ? (`estimate.${sentence}` as const) : (`readPage.exact.${sentence}` as const));
  const expected = plan?.full && !cannotRun ? (plan.skim ?? plan.full).totalMs : null;
  useEffect(() => onEstimate?.(expected), [expected, onEstimate]);

  if (!plan) return null;
  const { chunks, promptTokens, full, skim, read } = plan;
  // Said after every figure: it counts each question's steps, which an engine writing them together may beat; an InfMem read may stop early.
  const several = sentences(questions > 1 ? t('estimate.questions', { count: questions }) : '', infmemNote(asked, runs, engineId, model));
  if (!full || cannotRun) {
    const words = cannotRun
      ? sentences(t(say('aboutChunks'), { chunks }), t('estimate.cannotRun'))
      : noModel
        ? sentences(t(say('noModel'), { chunks }), several)
        : sentences(t(say('aboutChunks'), { chunks }), notMeasured(), several);
    return (
      <p className="estimate" role="note" aria-label={t('estimate.region')}>
        {words}
      </p>
    );
  }
  const per =
    full.source === 'steps'
      ? t(model ? 'estimate.perStepsModel' : 'estimate.perSteps', { duration: formatDuration(full.msPerChunk) })
      : t('estimate.perSpeed', {
          duration: formatDuration(full.msPerChunk),
          prompt: formatNumber(promptTokens),
          read: formatSpeed(full.speed!.prefillTokensPerSecond),
          written: formatNumber(full.writtenTokens),
          write: formatSpeed(full.speed!.decodeTokensPerSecond),
          where: apart!.where,
        });
  // The steps are not the whole read: past reads say what starting, storing and answering took; until one has, only the steps are a figure.
  const besides = beside && t('estimate.beside', { duration: formatDuration(besideMs(beside, read)) });
  if (!settings.skim) {
    return (
      <p className="estimate" role="note" aria-label={t('estimate.region')}>
        {sentences(t(say(besides ? 'full' : 'fullSteps'), { chunks, duration: formatDuration(full.totalMs), per, besides }), several)}
      </p>
    );
  }
  return (
    <p className="estimate" role="note" aria-label={t('estimate.region')}>
      {sentences(
        t(say(besides ? 'skim' : 'skimSteps'), {
          read,
          chunks,
          duration: formatDuration(skim!.totalMs),
          full: formatDuration(full.totalMs),
          saving: formatDuration(full.totalMs - skim!.totalMs),
          per,
          besides,
        }),
        several,
      )}
    </p>
  );
}

/** What past reads with this engine and model measured: their steps, and where known, their speeds apart and their time besides the steps. */
interface Measured {
  samples: StepSample[];
  apart: SpeedApart | undefined;
  beside: BesideSteps | undefined;
  /** The chunks a past read of these books cut, where one did: the count is then exact. */
  known: number | null;
}

/**
 * The estimate of a whole read and, when skimming, of the chunks a skim reads:
 * their steps, and what past reads took besides them where that is measured.
 */
function planOf(books: readonly DocumentRecord[], settings: ReadFormSettings, { samples, apart, beside, known }: Measured, questions: number) {
  const size = readSize(
    books.map((b) => b.tokens),
    settings.chunkTokens,
    settings.memoryTokens,
  );
  const { promptTokens } = size;
  const chunks = known ?? size.chunks;
  const input = { promptTokens, memoryTokens: settings.memoryTokens, steps: samples, ...(apart ? { speed: apart.speed } : {}) };
  const withBeside = <T extends { totalMs: number; chunks: number }>(e: T): T => (beside ? { ...e, totalMs: e.totalMs + besideMs(beside, e.chunks) } : e);
  // Every question writes a memory at every chunk read: as many steps for each, then as many answers.
  const perQuestion = <T extends { totalMs: number }>(e: T): T => ({ ...e, totalMs: e.totalMs * questions });
  const steps = estimateRead({ ...input, chunks });
  const full = steps && perQuestion(withBeside(steps));
  if (!full || !settings.skim) return { chunks, promptTokens, full, skim: null, read: chunks };
  const keep = settings.skimPercent / 100;
  // Following the memory may add up to its budget on the way forward, and as much again looking back.
  const followed = settings.skimFollow ? followBudget(chunks, keep) * (settings.skimLookBack ? 2 : 1) : 0;
  const read = Math.min(chunks, skimmedChunks(chunks, keep, DEFAULT_SKIM.neighbours) + followed);
  return { chunks, promptTokens, full, skim: perQuestion(withBeside(estimateRead({ ...input, chunks: read })!)), read };
}
