import type { Tokenizer } from '../core/tokenizer';
import { plantChain } from './chains';
import { assemble, fill, type Haystack, type Insert, NOISE, type Placement, type Segment, segment } from './haystack';
import { Rng } from './rng';
import { adjectiveNoun, capitalize, COLOURS, distinct, FIRST_NAMES, INSTRUMENTS, madeUpWord, OBJECTS, THINGS, TRADES } from './words';

/** How a sample's reply is scored (see score.ts). */
export type Metric = 'string_match_all' | 'string_match_part' | 'qa';

export const TASK_IDS = [
  'niah_single_1',
  'niah_single_2',
  'niah_single_3',
  'niah_multikey_1',
  'niah_multikey_2',
  'niah_multikey_3',
  'niah_multivalue',
  'niah_multiquery',
  'vt',
  'fwe',
  'cwe',
  'book_qa',
  'chain_2',
  'chain_3',
  'chain_2_reversed',
  'chain_3_reversed',
] as const;

export type TaskId = (typeof TASK_IDS)[number];

export interface TaskInfo {
  id: TaskId;
  metric: Metric;
  /** What fills the document around what is planted. */
  haystack: 'noise' | 'essay' | 'needles' | 'words';
  description: string;
}

export const TASKS: Readonly<Record<TaskId, TaskInfo>> = {
  niah_single_1: {
    id: 'niah_single_1',
    metric: 'string_match_all',
    haystack: 'noise',
    description: 'One needle (a 7-digit number) in repeated noise sentences.',
  },
  niah_single_2: { id: 'niah_single_2', metric: 'string_match_all', haystack: 'essay', description: 'One needle (a 7-digit number) in an essay.' },
  niah_single_3: { id: 'niah_single_3', metric: 'string_match_all', haystack: 'essay', description: 'One needle (a UUID) in an essay.' },
  niah_multikey_1: {
    id: 'niah_multikey_1',
    metric: 'string_match_all',
    haystack: 'essay',
    description: 'Four needles with different keys in an essay; one is asked for.',
  },
  niah_multikey_2: {
    id: 'niah_multikey_2',
    metric: 'string_match_all',
    haystack: 'needles',
    description: 'One needle among thousands of needles with other keys.',
  },
  niah_multikey_3: { id: 'niah_multikey_3', metric: 'string_match_all', haystack: 'needles', description: 'As multikey_2, with UUID keys and values.' },
  niah_multivalue: {
    id: 'niah_multivalue',
    metric: 'string_match_all',
    haystack: 'essay',
    description: 'One key with four values in an essay; all four are asked for.',
  },
  niah_multiquery: { id: 'niah_multiquery', metric: 'string_match_all', haystack: 'essay', description: 'Four keys in an essay; all four are asked for.' },
  vt: { id: 'vt', metric: 'string_match_all', haystack: 'noise', description: 'Variable tracking: a chain of five assignments spread through noise.' },
  fwe: {
    id: 'fwe',
    metric: 'string_match_all',
    haystack: 'words',
    description: 'Frequent words: the three most frequent made-up words of a Zipf-distributed text.',
  },
  cwe: { id: 'cwe', metric: 'string_match_all', haystack: 'words', description: 'Common words: the ten words that a long numbered list repeats most.' },
  book_qa: { id: 'book_qa', metric: 'qa', haystack: 'essay', description: 'Two planted facts far apart in a book; the question needs both (multi-hop).' },
  chain_2: {
    id: 'chain_2',
    metric: 'qa',
    haystack: 'essay',
    description: 'A chain of two planted facts, each naming only the next, in reading order; the answer shares no word with the question.',
  },
  chain_3: { id: 'chain_3', metric: 'qa', haystack: 'essay', description: 'As chain_2, with three facts.' },
  chain_2_reversed: {
    id: 'chain_2_reversed',
    metric: 'qa',
    haystack: 'essay',
    description: 'As chain_2, the facts in reverse order: the answer comes first in the book.',
  },
  chain_3_reversed: { id: 'chain_3_reversed', metric: 'qa', haystack: 'essay', description: 'As chain_3, the facts in reverse order.' },
};

export function isTaskId(id: string): id is TaskId {
  return (TASK_IDS as readonly string[]).includes(id);
}

export interface GenerateInput {
  seed: number;
  /** Target length of the document in tokens. */
  tokens: number;
  tokenizer: Tokenizer;
  /** The "essay" haystack: a book, a generated essay, or the person's own document. */
  essay: Haystack;
}

export interface TaskSample {
  task: TaskId;
  seed: number;
  targetTokens: number;
  document: string;
  /** Tokens of `document` by the tokenizer, from its segments' counts. */
  tokens: number;
  question: string;
  references: string[];
  metric: Metric;
  /** The planted needles, facts or assignments, in document order. */
  placements: Placement[];
}

/** Builds one sample of `task`, a pure function of the input. */
export function generateSample(task: TaskId, input: GenerateInput): TaskSample {
  const rng = new Rng(input.seed);
  const made = GENERATORS[task](rng, input);
  return { task, seed: input.seed, targetTokens: input.tokens, metric: TASKS[task].metric, ...made };
}

type Made = Pick<TaskSample, 'document' | 'tokens' | 'question' | 'references' | 'placements'>;

const GENERATORS: Record<TaskId, (rng: Rng, input: GenerateInput) => Made> = {
  niah_single_1: (r, i) => niah(r, i, { haystack: 'noise', keys: 'word', values: 'number', planted: 1, perKey: 1, queried: 1 }),
  niah_single_2: (r, i) => niah(r, i, { haystack: 'essay', keys: 'word', values: 'number', planted: 1, perKey: 1, queried: 1 }),
  niah_single_3: (r, i) => niah(r, i, { haystack: 'essay', keys: 'word', values: 'uuid', planted: 1, perKey: 1, queried: 1 }),
  niah_multikey_1: (r, i) => niah(r, i, { haystack: 'essay', keys: 'word', values: 'number', planted: 4, perKey: 1, queried: 1 }),
  niah_multikey_2: (r, i) => niah(r, i, { haystack: 'needles', keys: 'word', values: 'number', planted: 1, perKey: 1, queried: 1 }),
  niah_multikey_3: (r, i) => niah(r, i, { haystack: 'needles', keys: 'uuid', values: 'uuid', planted: 1, perKey: 1, queried: 1 }),
  niah_multivalue: (r, i) => niah(r, i, { haystack: 'essay', keys: 'word', values: 'number', planted: 1, perKey: 4, queried: 1 }),
  niah_multiquery: (r, i) => niah(r, i, { haystack: 'essay', keys: 'word', values: 'number', planted: 4, perKey: 1, queried: 4 }),
  vt: variableTracking,
  fwe: frequentWords,
  cwe: commonWords,
  book_qa: bookQa,
  chain_2: (r, i) => plantChain(r, i, 2, true),
  chain_3: (r, i) => plantChain(r, i, 3, true),
  chain_2_reversed: (r, i) => plantChain(r, i, 2, false),
  chain_3_reversed: (r, i) => plantChain(r, i, 3, false),
};

/** Inserts at random depths, the rest of the budget filled from `next`. */
function plant(input: GenerateInput, inserts: Insert[], next: () => Segment): Made {
  const planted = inserts.reduce((n, x) => n + x.segment.tokens, 0);
  const filler = fill(next, input.tokens - planted);
  const { document, tokens, placements } = assemble(filler, inserts, input.tokenizer);
  return { document, tokens, placements, question: '', references: [] };
}

interface NiahOptions {
  haystack: 'noise' | 'essay' | 'needles';
  keys: 'word' | 'uuid';
  values: 'number' | 'uuid';
  /** Keys planted. */
  planted: number;
  /** Values planted per key. */
  perKey: number;
  /** Keys asked for (the first ones planted). */
  queried: number;
}

function needleSentence(kind: 'number' | 'uuid', key: string, value: string): string {
  return `One of the special magic ${kind}s for ${key} is: ${value}.`;
}

function niah(rng: Rng, input: GenerateInput, o: NiahOptions): Made {
  const { tokenizer } = input;
  const makeKey = () => (o.keys === 'uuid' ? rng.uuid() : adjectiveNoun(rng));
  const makeValue = () => (o.values === 'uuid' ? rng.uuid() : rng.digits(7));
  const keys = distinct(o.planted, makeKey);
  const values = distinct(o.planted * o.perKey, makeValue);
  const needles = keys.flatMap((key, k) => values.slice(k * o.perKey, (k + 1) * o.perKey).map((value) => ({ key, value })));
  const inserts = needles.map(({ key, value }) => ({
    depth: rng.next(),
    segment: segment(needleSentence(o.values, key, value), tokenizer),
  }));

  const taken = new Set(keys);
  const next =
    o.haystack === 'noise'
      ? NOISE.stream(tokenizer)
      : o.haystack === 'essay'
        ? input.essay.stream(tokenizer, rng.int(0, input.essay.sentences.length - 1))
        : () => {
            // Distractor needles: same sentence, other keys; never one of the planted keys.
            let key = makeKey();
            while (taken.has(key)) key = makeKey();
            return segment(needleSentence(o.values, key, makeValue()), tokenizer);
          };
  const made = plant(input, inserts, next);

  const asked = keys.slice(0, o.queried);
  const kind = o.values;
  const question =
    o.queried > 1
      ? `What are all the special magic ${kind}s for ${listed(asked)} mentioned in the provided text?`
      : o.perKey > 1
        ? `What are all the special magic ${kind}s for ${asked[0]} mentioned in the provided text?`
        : `What is the special magic ${kind} for ${asked[0]} mentioned in the provided text?`;
  const references = needles.filter((n) => asked.includes(n.key)).map((n) => n.value);
  return { ...made, question, references };
}

function listed(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** A chain VAR A = 12345, VAR B = VAR A, … (four hops) spread through noise, in order. */
function variableTracking(rng: Rng, input: GenerateInput): Made {
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const names = distinct(5, () => Array.from({ length: 5 }, () => rng.pick([...letters])).join(''));
  const value = rng.digits(5);
  const depths = names.map(() => rng.next()).sort((a, b) => a - b);
  const inserts = names.map((name, i) => ({
    depth: depths[i]!,
    segment: segment(`VAR ${name} = ${i === 0 ? value : `VAR ${names[i - 1]}`}.`, input.tokenizer),
  }));
  const made = plant(input, inserts, NOISE.stream(input.tokenizer));
  return {
    ...made,
    question: `Find all variables that are assigned the value ${value} in the text, directly or through other variables.`,
    references: names,
  };
}

/** Segments of single words, counted once per distinct word. */
function wordCounter(tokenizer: Tokenizer): (w: string) => number {
  const cache = new Map<string, number>();
  return (w) => {
    let n = cache.get(w);
    if (n === undefined) cache.set(w, (n = tokenizer.count(` ${w}`)));
    return n;
  };
}

/**
 * RULER's frequent-words task: made-up six-letter words with Zipf counts
 * (α = 2), shuffled. The most frequent "word" is the noise token "...";
 * the answer is the next three.
 */
function frequentWords(rng: Rng, input: GenerateInput): Made {
  const alpha = 2;
  const letters = [...'abcdefghijklmnopqrstuvwxyz'];
  const vocab = ['...', ...distinct(1999, () => Array.from({ length: 6 }, () => rng.pick(letters)).join(''))];
  const cost = wordCounter(input.tokenizer);
  const weights = vocab.map((_, k) => (k + 1) ** -alpha);
  const zeta = weights.reduce((a, b) => a + b, 0);
  const countsFor = (n: number) => weights.map((w) => Math.floor((n * w) / zeta));
  const tokensFor = (counts: number[]) => counts.reduce((t, c, k) => t + c * cost(vocab[k]!), 0);
  // The largest word total whose document fits the target: tokens grow with it.
  let lo = 0;
  let hi = Math.max(16, input.tokens);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (tokensFor(countsFor(mid)) <= input.tokens) lo = mid;
    else hi = mid - 1;
  }
  const counts = countsFor(lo);
  const words = rng.shuffle(vocab.flatMap((w, k) => Array<string>(counts[k]!).fill(w)));
  const { document, tokens } = assemble(
    words.map((w) => ({ text: ` ${w}`, tokens: cost(w) })),
    [],
    input.tokenizer,
  );
  return {
    document,
    tokens,
    placements: [],
    question: 'What are the three most frequently appearing coded words in the text? Ignore the "..." marks.',
    references: vocab.slice(1, 4),
  };
}

/**
 * RULER's common-words task: a numbered list where ten words appear 30 times
 * each and every other word 3 times; the answer is the ten.
 */
function commonWords(rng: Rng, input: GenerateInput): Made {
  const cost = wordCounter(input.tokenizer);
  const numberCosts: number[] = [];
  const numberCost = (i: number) => (numberCosts[i] ??= input.tokenizer.count(` ${i}.`));
  const common = distinct(10, () => madeUpWord(rng, 2));
  const taken = new Set(common);
  const avgItem = 3 + common.reduce((n, w) => n + cost(w), 0) / common.length + Math.log10(input.tokens);
  // Short documents keep the common words commoner than the rest, with fewer repeats.
  const repeats = Math.max(6, Math.min(30, Math.floor((input.tokens * 0.5) / (10 * avgItem))));
  const items: string[] = common.flatMap((w) => Array<string>(repeats).fill(w));
  let total = 0;
  for (let i = 1; i <= items.length; i++) total += numberCost(i) + cost(items[i - 1]!);
  for (;;) {
    let w = madeUpWord(rng, 3);
    while (taken.has(w)) w = madeUpWord(rng, 3);
    const n = items.length;
    const add = numberCost(n + 1) + numberCost(n + 2) + numberCost(n + 3) + 3 * cost(w);
    if (total + add > input.tokens) break;
    taken.add(w);
    items.push(w, w, w);
    total += add;
  }
  rng.shuffle(items);
  const { document, tokens } = assemble(
    items.map((w, i) => ({ text: ` ${i + 1}. ${w}`, tokens: numberCost(i + 1) + cost(w) })),
    [],
    input.tokenizer,
  );
  return {
    document,
    tokens,
    placements: [],
    question: 'What are the ten most common words in the numbered list?',
    references: common,
  };
}

interface FactPair {
  bridge: string;
  answerFact: string;
  question: string;
  answer: string;
}

/** Multi-hop pairs: the first fact names a bridge, the second says something about it. */
const FACT_PAIRS: ((r: Rng) => FactPair)[] = [
  (r) => {
    const person = `${r.pick(FIRST_NAMES)} ${capitalize(madeUpWord(r, 2))}`;
    const town = capitalize(madeUpWord(r, 2));
    const thing = r.pick(THINGS);
    return {
      bridge: `${person} was born in the town of ${town}.`,
      answerFact: `The town of ${town} is known for its ${thing}.`,
      question: `What is the town where ${person} was born known for?`,
      answer: thing,
    };
  },
  (r) => {
    const [giver, keeper] = distinct(2, () => `${r.pick(FIRST_NAMES)} ${capitalize(madeUpWord(r, 2))}`);
    const object = r.pick(OBJECTS);
    const town = capitalize(madeUpWord(r, 2));
    return {
      bridge: `${keeper} keeps a ${object} that was a gift from ${giver}.`,
      answerFact: `${giver} works as a ${r.pick(TRADES)} in the town of ${town}.`,
      question: `In which town does the person who gave ${keeper} a ${object} work?`,
      answer: town,
    };
  },
  (r) => {
    const ship = capitalize(madeUpWord(r, 3));
    const harbour = capitalize(madeUpWord(r, 2));
    const colour = r.pick(COLOURS);
    return {
      bridge: `The ship ${ship} was built in the harbour of ${harbour}.`,
      answerFact: `The harbour of ${harbour} is guarded by a lighthouse painted ${colour}.`,
      question: `What colour is the lighthouse guarding the harbour where the ship ${ship} was built?`,
      answer: colour,
    };
  },
  (r) => {
    const [spouse, other] = distinct(2, () => `${r.pick(FIRST_NAMES)} ${capitalize(madeUpWord(r, 2))}`);
    const instrument = r.pick(INSTRUMENTS);
    return {
      bridge: `${other} married ${spouse} in the spring.`,
      answerFact: `The favourite instrument of ${spouse} is the ${instrument}.`,
      question: `What is the favourite instrument of the person whom ${other} married?`,
      answer: instrument,
    };
  },
];

/**
 * A multi-hop question over a book, in the spirit of RULER-HotpotQA: two
 * planted facts, one in the first third and one in the last third of the
 * document (either may come first), and a question that needs both.
 */
function bookQa(rng: Rng, input: GenerateInput): Made {
  const pair = rng.pick(FACT_PAIRS)(rng);
  const early = rng.between(0.05, 0.35);
  const late = rng.between(0.65, 0.95);
  const [first, second] = rng.next() < 0.5 ? [pair.bridge, pair.answerFact] : [pair.answerFact, pair.bridge];
  const inserts = [
    { depth: early, segment: segment(first, input.tokenizer) },
    { depth: late, segment: segment(second, input.tokenizer) },
  ];
  const made = plant(input, inserts, input.essay.stream(input.tokenizer, rng.int(0, input.essay.sentences.length - 1)));
  return { ...made, question: pair.question, references: [pair.answer] };
}
