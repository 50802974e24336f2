import { Haystack } from './haystack';
import { Rng } from './rng';

/**
 * A made-up essay for the "essay" haystack where no book is at hand (the
 * browser ships none): plain English prose from templates and small word
 * lists, the same every time. It avoids the words the tasks ask about.
 */

const W = {
  people: 'farmers|sailors|travellers|weavers|scholars|children|merchants|shepherds|painters|gardeners|miners|fishermen'.split('|'),
  place: 'valley|coast|old quarter|market square|hill country|river delta|northern plain|mountain pass|island|forest edge'.split('|'),
  thing: 'road|mill|orchard|bridge|well|chapel|workshop|granary|wall|canal|library|courtyard|fishing fleet|vineyard'.split('|'),
  adj: 'quiet|narrow|patient|weathered|restless|careful|distant|familiar|stubborn|humble|generous|crooked|sunlit|forgotten'.split('|'),
  idea: 'memory|habit|trust|craft|hope|patience|curiosity|tradition|doubt|kindness|ambition|silence|effort|change'.split('|'),
  season: 'spring|summer|autumn|winter|dry season|rainy season|harvest'.split('|'),
  pastVerb: 'rebuilt|repaired|measured|painted|abandoned|guarded|described|admired|visited|remembered|mapped|cleared'.split('|'),
  verb: 'wander|argue|gather|listen|linger|prosper|hesitate|endure|return|settle|labour|rest'.split('|'),
  adverb: 'slowly|carefully|quietly|eagerly|rarely|often|patiently|gladly|barely|steadily'.split('|'),
  time: 'the first frost|the long rains|the end of the year|the next harvest|nightfall|the spring fair|the great flood'.split('|'),
};

type Slots = typeof W;

const TEMPLATES: ((r: Rng, w: Slots) => string)[] = [
  (r, w) => `In the ${r.pick(w.season)}, the ${r.pick(w.people)} of the ${r.pick(w.place)} ${r.pick(w.verb)} ${r.pick(w.adverb)}.`,
  (r, w) => `Many ${r.pick(w.people)} believed that the ${r.pick(w.adj)} ${r.pick(w.thing)} would last until ${r.pick(w.time)}.`,
  (r, w) => `It is easy to forget how much ${r.pick(w.idea)} a single ${r.pick(w.thing)} can hold.`,
  (r, w) => `The ${r.pick(w.people)} who ${r.pick(w.pastVerb)} the ${r.pick(w.thing)} rarely spoke of ${r.pick(w.idea)}.`,
  (r, w) => `Long before ${r.pick(w.time)}, someone had ${r.pick(w.pastVerb)} the ${r.pick(w.adj)} ${r.pick(w.thing)} by the ${r.pick(w.place)}.`,
  (r, w) => `Nobody could say whether ${r.pick(w.idea)} or ${r.pick(w.idea)} had shaped the ${r.pick(w.place)} more.`,
  (r, w) => `Some argue that ${r.pick(w.idea)} is learned ${r.pick(w.adverb)}, the way ${r.pick(w.people)} learn the ${r.pick(w.place)}.`,
  (r, w) => `When the ${r.pick(w.thing)} was ${r.pick(w.pastVerb)}, the ${r.pick(w.people)} began to ${r.pick(w.verb)} there again.`,
  (r, w) => `A ${r.pick(w.adj)} ${r.pick(w.thing)} says more about ${r.pick(w.idea)} than any speech does.`,
  (r, w) => `By ${r.pick(w.time)} the ${r.pick(w.people)} had ${r.pick(w.pastVerb)} every ${r.pick(w.thing)} in the ${r.pick(w.place)}.`,
  (r, w) => `Perhaps ${r.pick(w.idea)} is only ${r.pick(w.idea)} that has learned to ${r.pick(w.verb)}.`,
  (r, w) => `Visitors to the ${r.pick(w.place)} still ask who ${r.pick(w.pastVerb)} the ${r.pick(w.adj)} ${r.pick(w.thing)}.`,
];

let essay: Haystack | undefined;

/** About 60,000 tokens of made-up prose, built once. */
export function generatedEssay(): Haystack {
  if (essay) return essay;
  const rng = new Rng(20250701);
  const sentences = Array.from({ length: 4000 }, () => rng.pick(TEMPLATES)(rng, W));
  essay = new Haystack('generated essay', sentences);
  return essay;
}
