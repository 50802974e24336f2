import { describe, expect, it } from 'vitest';
import type { ChunkSpan } from '../src/core/chunker';
import type { PlannedChunk } from '../src/core/read-reason';
import { SkimIndex } from '../src/core/skim';
import { followBudget, SkimFollower } from '../src/core/skim-follow';

/** A book of paragraphs, one chunk each: paragraph i is filler unless `planted` says otherwise. */
function book(count: number, planted: Record<number, string>): { text: string; chunks: ChunkSpan[] } {
  const chunks: ChunkSpan[] = [];
  let text = '';
  for (let i = 0; i < count; i++) {
    const body = `The rain fell on the quiet fields near the river, and the road was long. ${planted[i] ?? ''}`;
    chunks.push({ start: text.length, end: text.length + body.length, tokens: 20 });
    text += `${body}\n\n`;
  }
  return { text, chunks };
}

const QUESTION = 'In which town did the compass that Captain Ferrand gave away end up hidden?';

/** A follower over `planted` whose plan starts as `read` (chunk indexes), all "ranked". */
function setup(count: number, planted: Record<number, string>, read: number[], lookBack = false) {
  const { text, chunks } = book(count, planted);
  const index = new SkimIndex(text, chunks);
  const plan: PlannedChunk[] = read.map((i) => ({ ...chunks[i]!, reason: { by: 'ranked' } }));
  const follower = new SkimFollower(index, plan, { question: QUESTION, memory: 'No previous memory', keep: 0.05, neighbours: 1, lookBack });
  const at = (i: number) => plan.findIndex((c) => c.start === chunks[i]!.start);
  const indexes = () => plan.map((c) => chunks.findIndex((x) => x.start === c.start));
  return { plan, follower, at, indexes, chunks };
}

describe('following the memory', () => {
  it('looks a new name up on its own and plans the later chunk that holds it, saying which name led there', () => {
    const { plan, follower, at, indexes } = setup(
      40,
      { 5: 'Captain Ferrand gave a compass to a sailor named Tobias Quennell.', 30: 'Quennell hid it under the mill.' },
      [4, 5, 6, 20],
    );
    const grew = follower.follow('Captain Ferrand gave a compass to a sailor named Tobias Quennell.', at(5));
    expect(grew).toBe(true);
    expect(indexes()).toEqual([4, 5, 6, 20, 30]);
    expect(plan[4]!.reason).toEqual({ by: 'followed', name: 'Quennell' });
  });

  it('skips a name that many chunks hold, and names the question already has', () => {
    const planted: Record<number, string> = { 5: 'Captain Ferrand met Elizabeth and Quennell.', 30: 'Quennell hid it.' };
    for (let i = 7; i < 40; i += 2) planted[i] = 'Elizabeth walked by.';
    const { follower, at, indexes } = setup(40, planted, [4, 5]);
    follower.follow('The compass went from Captain Ferrand to Elizabeth and Quennell.', at(5));
    // Elizabeth is in half the book: she points nowhere. Ferrand is the question's own.
    expect(indexes()).toEqual([4, 5, 30]);
  });

  it('looks each name up once: a name from an earlier memory adds nothing later', () => {
    const { follower, at, indexes, plan } = setup(400, { 5: 'Captain Ferrand gave it to Quennell.', 12: 'Quennell rode on.', 30: 'Quennell hid it.' }, [5, 20]);
    follower.follow('Captain Ferrand gave the compass to Quennell.', at(5));
    expect(indexes()).toEqual([5, 12, 20, 30]);
    // Read on to chunk 20 with the same name in memory: it is not looked up again.
    expect(follower.follow('Captain Ferrand gave the compass to Quennell.', at(20))).toBe(false);
    expect(plan).toHaveLength(4);
  });

  it('adds a few chunks per name, the ones nearest first when none matches the question better', () => {
    const planted: Record<number, string> = { 2: 'Captain Ferrand knew Quennell.' };
    for (const i of [10, 11, 12]) planted[i] = 'Quennell passed by.';
    const { follower, at, indexes } = setup(400, planted, [2]);
    follower.follow('Captain Ferrand knew Quennell.', at(2));
    expect(indexes()).toEqual([2, 10, 11]);
  });

  it('stops at its budget, and names far from the question use only half of it', () => {
    const far = ['Dagmar', 'Eskil', 'Fennick', 'Gorm', 'Hallvard', 'Iskra'];
    const near = ['Abel', 'Berit', 'Cosmo'];
    const planted: Record<number, string> = { 1: `The weather was mild for ${far.join(' and ')}.`, 2: `Captain Ferrand knew ${near.join(' and ')}.` };
    far.forEach((name, k) => (planted[40 + k] = `${name} was seen.`));
    near.forEach((name, k) => (planted[60 + k] = `${name} was seen.`));
    const { follower, at, plan } = setup(80, planted, [1, 2]);
    expect(followBudget(80, 0.05)).toBe(4);
    // Names far from the question come first, but may take only half of the budget: the rest waits for near ones.
    follower.follow(planted[1]!, at(1));
    follower.follow(`${planted[1]}\n${planted[2]}`, at(2));
    const names = plan.filter((c) => c.reason?.by === 'followed').map((c) => (c.reason as { name: string }).name);
    expect(names.filter((n) => far.includes(n))).toHaveLength(2);
    expect(names.filter((n) => near.includes(n))).toHaveLength(2);
    expect(follower.left.followed).toBe(0);
  });

  it('follows a chain: a name written next to a followed name counts as near the question', () => {
    const planted = {
      3: 'Captain Ferrand gave a compass to a sailor named Tobias Quennell.',
      20: 'Quennell later sold his prize to a trader called Mira Ostrander.',
      35: 'Ostrander hid it beneath the old mill.',
    };
    const { follower, at, indexes, plan } = setup(40, planted, [3]);
    follower.follow(planted[3], at(3));
    expect(indexes()).toEqual([3, 20]);
    follower.follow(`${planted[3]}\n${planted[20]}`, at(20));
    expect(indexes()).toEqual([3, 20, 35]);
    expect(plan[2]!.reason).toEqual({ by: 'followed', name: 'Ostrander' });
  });

  it('without look-back, a name that points only backwards adds nothing', () => {
    const { follower, at, indexes } = setup(40, { 5: 'Quennell hid it.', 30: 'Captain Ferrand gave it to Quennell.' }, [30]);
    expect(follower.follow('Captain Ferrand gave the compass to Quennell.', at(30))).toBe(false);
    expect(indexes()).toEqual([30]);
  });
});

describe('looking back', () => {
  const planted = {
    4: 'Ostrander hid it beneath the old mill.',
    15: 'Quennell later sold his prize to a trader called Mira Ostrander.',
    30: 'Captain Ferrand gave a compass to a sailor named Tobias Quennell.',
  };

  it('reads earlier chunks that names point to after the last planned one, walking back, and follows further back from them', () => {
    const { follower, at, indexes, plan } = setup(40, planted, [29, 30, 31], true);
    follower.follow(planted[30], at(30));
    expect(indexes()).toEqual([29, 30, 31, 15]);
    expect(plan[3]!.reason).toEqual({ by: 'looked-back', name: 'Quennell' });
    follower.follow(`${planted[30]}\nNothing new.`, at(31));
    follower.follow(`${planted[30]}\n${planted[15]}`, at(15));
    expect(indexes()).toEqual([29, 30, 31, 15, 4]);
    expect(plan[4]!.reason).toEqual({ by: 'looked-back', name: 'Ostrander' });
  });

  it('keeps the tail latest first, and puts what is followed forward before it', () => {
    const more = {
      10: 'Quennell was born here.',
      15: 'Quennell sailed.',
      30: 'Captain Ferrand knew Quennell.',
      31: 'Captain Ferrand also knew Tobias.',
      36: 'Tobias came back.',
    };
    const { follower, at, indexes, plan } = setup(400, more, [30, 31], true);
    follower.follow(more[30], at(30));
    expect(indexes()).toEqual([30, 31, 15, 10]);
    follower.follow(`${more[30]}\n${more[31]}`, at(31));
    expect(indexes()).toEqual([30, 31, 36, 15, 10]);
    expect(plan[2]!.reason).toEqual({ by: 'followed', name: 'Tobias' });
  });

  it('on the way back, names pointing forward add nothing', () => {
    const more = { ...planted, 20: 'Ostrander bought a cart.' };
    const { follower, at, indexes } = setup(400, more, [30], true);
    follower.follow(planted[30], at(30));
    expect(indexes()).toEqual([30, 15]);
    follower.follow(`${planted[30]}\n${planted[15]}`, at(15));
    // Chunk 20 lies between: the pass has gone past it; chunk 4 is further back.
    expect(indexes()).toEqual([30, 15, 4]);
  });

  it('a follower rebuilt from a stored plan and memory carries on: names already in memory are not looked up again', () => {
    const first = setup(40, planted, [30], true);
    first.follower.follow(planted[30], first.at(30));
    const stored = first.plan.map((c) => ({ ...c }));
    const { text, chunks } = book(40, planted);
    const again = new SkimFollower(new SkimIndex(text, chunks), stored, {
      question: QUESTION,
      memory: planted[30],
      keep: 0.05,
      neighbours: 1,
      lookBack: true,
    });
    expect(again.left['looked-back']).toBe(first.follower.left['looked-back']);
    expect(again.follow(planted[30], 0)).toBe(false);
    expect(again.follow(`${planted[30]}\n${planted[15]}`, 1)).toBe(true);
    expect(stored.map((c) => chunks.findIndex((x) => x.start === c.start))).toEqual([30, 15, 4]);
  });
});
