import { assemble, fill, type Haystack, type Placement, segment } from './haystack';
import type { Rng } from './rng';
import { capitalize, distinct, FIRST_NAMES, madeUpWord, OBJECTS } from './words';
import type { Tokenizer } from '../core/tokenizer';

/**
 * Chains of planted facts where each fact names only the next: the question
 * names the first; the answer is in the last, which shares no word with the
 * question. Only a reader that remembers who the first fact named can find the
 * second, and so on.
 */

const PLACES = ['boathouse', 'chapel', 'granary', 'mill', 'smithy', 'tannery', 'watchtower'];

export interface Chain {
  /** The facts in the order the chain is followed: the question's name first. */
  hops: string[];
  question: string;
  answer: string;
}

/** A chain of `length` facts (2 or more). Names are made up (three syllables), so no book holds them by chance. */
export function makeChain(rng: Rng, length: number): Chain {
  const captain = capitalize(madeUpWord(rng, 3));
  const people = distinct(length - 1, () => `${rng.pick(FIRST_NAMES)} ${capitalize(madeUpWord(rng, 3))}`);
  const surname = (person: string) => person.split(' ')[1]!;
  const object = rng.pick(OBJECTS);
  const town = capitalize(madeUpWord(rng, 3));
  const hops = [`Captain ${captain} gave a ${object} to a sailor named ${people[0]}.`];
  for (let k = 1; k < people.length; k++) hops.push(`${surname(people[k - 1]!)} later sold his prize to a trader called ${people[k]}.`);
  hops.push(`${surname(people[people.length - 1]!)} hid it beneath the old ${rng.pick(PLACES)} at ${town}.`);
  return {
    hops,
    question: `In which town did the ${object} that Captain ${captain} gave away end up hidden?`,
    answer: town,
  };
}

export interface ChainInput {
  tokens: number;
  tokenizer: Tokenizer;
  essay: Haystack;
}

/**
 * A book with a chain planted at random depths: in the order it is followed
 * (`forward`), or the other way round, the last fact first.
 */
export function plantChain(
  rng: Rng,
  input: ChainInput,
  length: number,
  forward: boolean,
): { document: string; tokens: number; placements: Placement[]; question: string; references: string[] } {
  const chain = makeChain(rng, length);
  const depths = chain.hops.map(() => rng.between(0.02, 0.98)).sort((a, b) => (forward ? a - b : b - a));
  const inserts = chain.hops.map((hop, k) => ({ depth: depths[k]!, segment: segment(hop, input.tokenizer) }));
  const planted = inserts.reduce((n, x) => n + x.segment.tokens, 0);
  const filler = fill(input.essay.stream(input.tokenizer, rng.int(0, input.essay.sentences.length - 1)), input.tokens - planted);
  const { document, tokens, placements } = assemble(filler, inserts, input.tokenizer);
  return { document, tokens, placements, question: chain.question, references: [chain.answer] };
}
