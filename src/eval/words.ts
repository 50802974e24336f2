import type { Rng } from './rng';

/** Word lists for needle keys (adjective-noun pairs, as in RULER) and planted facts. */

export const ADJECTIVES: readonly string[] = (
  'able acid amber ancient angry arctic autumn awake bitter blank bold brave brief bright brisk broad bronze calm ' +
  'careful cheap chilly civil clean clever cloudy coarse cold cosmic crimson crisp cruel curly damp dark dear deep ' +
  'dense dizzy dry dusty eager early eastern elastic empty equal exact faint false fancy fast fierce final firm ' +
  'flat fond fragile free fresh frozen gentle giant glad golden grand gray green grim happy hardy harsh hasty heavy ' +
  'hidden hollow honest humble hungry icy idle jolly keen kind large lazy lean light little lively lonely loose ' +
  'loud loyal lucky mellow merry mild misty modern modest moody narrow neat nervous noble noisy odd old open ' +
  'orange pale patient plain polite proud purple quick quiet rapid rare raw ready red rich rigid ripe rough round ' +
  'royal rural rusty sacred salty scarlet secret sharp shiny short shy silent silver simple sleepy slim slow small ' +
  'smooth soft solid sour spare spicy steady steep sticky stiff stormy strict strong sturdy subtle sudden sunny ' +
  'sweet swift tall tame tender thick thin tidy tiny tired tough tranquil urban vague vast velvet vivid warm wary ' +
  'weak wealthy wet white wide wild windy wise wooden young zealous'
).split(' ');

export const NOUNS: readonly string[] = (
  'acorn anchor apple arch arrow attic badge bakery ball banner barn barrel basket beacon bell bench berry blanket ' +
  'boat bottle boulder bowl box branch bread brick bridge brook broom bucket button cabin cable cake camel candle ' +
  'canoe canyon carpet castle cave cellar chair chalk cherry chimney circle clock cloud coat comet compass copper ' +
  'cottage crayon creek crown cup curtain daisy desk diamond dock door dragon drum eagle easel engine falcon fence ' +
  'fern ferry fiddle field flag flute forest fountain fox garden gate glacier glove goose granite grape harbor ' +
  'hammer hat hawk helmet hill honey horizon hut island ivory jacket jar jewel kettle kite ladder lake lamp lantern ' +
  'leaf lemon lily lion locket maple marble meadow mirror mitten moon mountain needle nest oak ocean olive orchard ' +
  'otter owl paddle palace parrot pebble pencil pepper piano pillow pine planet plum pocket pond pony quill quilt ' +
  'rabbit radio raft rain raven ribbon river robin rocket rose saddle sail salmon sandal scarf shell shovel ' +
  'sparrow spoon spring stable star statue stone storm stove sugar summit swan table teapot temple thimble thistle ' +
  'thunder tiger timber torch tower trail tulip tunnel turtle umbrella valley velvet violin wagon wall walnut ' +
  'whale wheel whistle willow window wizard wolf yarn zebra'
).split(' ');

export const FIRST_NAMES: readonly string[] = (
  'Ada Alaric Anselm Bertil Brisa Cato Corin Dagny Edda Elias Esme Fenna Gideon Greta Halvard Ilse Isolde Jorun ' +
  'Kasimir Linnea Lucan Maren Milo Nadia Odile Orrin Petra Quentin Rosalind Sabine Silas Solveig Tamsin Teodor ' +
  'Ulla Valter Vera Wendel Yara Zenon'
).split(' ');

export const COLOURS: readonly string[] =
  'amber azure cobalt coral crimson emerald indigo lavender magenta maroon ochre olive saffron scarlet teal turquoise vermilion violet'.split(' ');

export const THINGS: readonly string[] = [
  'blue glass lanterns',
  'copper bells',
  'salt bread',
  'woven reed baskets',
  'plum brandy',
  'carved walnut chairs',
  'smoked eel',
  'silver thimbles',
  'painted kites',
  'honey cakes',
  'wool blankets',
  'clay whistles',
  'pressed cider',
  'iron weathervanes',
  'lace collars',
  'pickled cherries',
];

export const OBJECTS: readonly string[] = (
  'brass compass|pewter locket|wooden flute|leather journal|silver pocket watch|glass paperweight|velvet purse|' +
  'bone chess set|copper kettle|tin music box|ivory comb|painted fan'
).split('|');

export const TRADES: readonly string[] =
  'baker|clockmaker|ferryman|glassblower|bookbinder|cooper|weaver|apothecary|saddler|lamplighter|cartographer|mason'.split('|');

export const INSTRUMENTS: readonly string[] = 'cello|harp|oboe|bassoon|lute|clarinet|dulcimer|accordion|viola|trombone|harpsichord|zither'.split('|');

const ONSETS = 'b br c d dr f g gr h k l m n p pr r s st t tr v w z'.split(' ');
const VOWELS = 'a e i o u ai ea io ou'.split(' ');
const CODAS = ['', '', '', 'n', 'r', 'l', 's', 'th', 'nd', 'rk'];

/** A pronounceable made-up word of `syllables` syllables: names and words no book contains. */
export function madeUpWord(rng: Rng, syllables: number): string {
  let w = '';
  for (let i = 0; i < syllables; i++) w += rng.pick(ONSETS) + rng.pick(VOWELS) + (i === syllables - 1 ? rng.pick(CODAS) : '');
  return w;
}

export function capitalize(w: string): string {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

/** A key such as "quiet-lantern". */
export function adjectiveNoun(rng: Rng): string {
  return `${rng.pick(ADJECTIVES)}-${rng.pick(NOUNS)}`;
}

/** `count` distinct values from `make`, none of them in `avoid`. */
export function distinct(count: number, make: () => string, avoid: ReadonlySet<string> = new Set()): string[] {
  const out = new Set<string>();
  for (let tries = 0; out.size < count; tries++) {
    if (tries > count * 1000) throw new Error(`could not draw ${count} distinct values`);
    const v = make();
    if (!avoid.has(v)) out.add(v);
  }
  return [...out];
}
