import { describe, expect, it } from 'vitest';
import type { Sources, TraceInput } from '../src/core/citations/citation';
import { Tracer } from '../src/core/citations/trace';

/** A run in miniature: the sections it read and the memory after each. */
function run(question: string, steps: readonly { section: string; memory: string }[]): TraceInput {
  const starts: number[] = [];
  let at = 0;
  for (const s of steps) {
    starts.push(at);
    at += s.section.length + 2;
  }
  return { question, memories: steps.map((s) => s.memory), section: (r) => (steps[r] ? { text: steps[r].section, start: starts[r]! } : undefined) };
}

const FILLER = [
  'The morning was grey and the harbour lay still under a low sky.',
  'Fishermen mended their nets on the quay while gulls argued overhead.',
  'A cart rattled past the chandlery, loaded with barrels of salted cod.',
];
const prose = (planted: string) => [FILLER[0], planted, FILLER[1], FILLER[2]].join(' ');
const sentences = (s: Sources) => s.citations.map((c) => c.sentence?.text);

describe('the sources listed for an answer', () => {
  // A note of the answer ("dear friend") whose one common word ("dear") entered the memory with a sentence about something else.
  const stay = 'When I had arrived at this point, an incident happened that protracted my stay.';
  const elsewhere = 'Little alteration, except the growth of our dear children, has taken place since you left us.';
  const answer = `${stay} My dear friend, what has happened?`;
  const steps = [
    { section: prose('Nothing happened that week.'), memory: 'No previous memory' },
    { section: prose(elsewhere), memory: 'Our dear children grow.' },
    { section: prose(stay), memory: `Our dear children grow.\n${answer}` },
  ];

  it('are only those whose sentence the answer holds: not one that shares a single common word with it', async () => {
    const sources = await new Tracer(run('What happened to William?', steps)).citeAnswer(answer);
    expect(sentences(sources)).toEqual([stay]);
    // The note no sentence of the book holds is said to have no source, not given the one that shares a word with it.
    expect(sources.unsourced).toEqual([{ text: 'My dear friend, what has happened?', reason: 'memory' }]);
  });

  it('still cite the note the answer was reached through by a name, which the answer does not repeat', async () => {
    const warden = 'The warden of Gull Rock is Orrin Vale.';
    const birth = 'Orrin Vale was born in Port Meridian, far from the sea.';
    const input = run('Where was the warden of Gull Rock born?', [
      { section: prose(warden), memory: warden },
      { section: prose(elsewhere), memory: `${warden}\nThe dear children grow.` },
      { section: prose(birth), memory: `${warden}\nThe dear children grow.\nOrrin Vale was born in Port Meridian.` },
    ]);
    expect(sentences(await new Tracer(input).citeAnswer('Port Meridian'))).toEqual([warden, birth]);
  });

  it('keep a sentence the answer holds by one name or number, or by its only word', async () => {
    const code = 'The vault code for the Marlowe archive is 4829137.';
    const input = run('What is the vault code for the Marlowe archive?', [
      { section: prose(code), memory: code },
      { section: prose('The clerk locked the door.'), memory: code },
    ]);
    expect(sentences(await new Tracer(input).citeAnswer('4829137'))).toEqual([code]);
    const rain = run('What fell all night?', [{ section: prose('All night the rain fell on the quay.'), memory: 'Rain fell all night.' }]);
    expect(sentences(await new Tracer(rain).citeAnswer('Rain.'))).toEqual(['All night the rain fell on the quay.']);
  });
});
