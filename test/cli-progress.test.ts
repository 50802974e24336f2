import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/cli/flags';
import { duration, Progress, progressMode, questionStepLine, type ReadStep, readStepLine } from '../src/cli/progress';
import { fakeTerminal, screen } from './support/terminal';

const step = (chunk: number, total = 4): ReadStep => ({
  chunk,
  total,
  memoryTokens: 100 * chunk,
  ms: 1000,
  promptTokens: 900,
  completionTokens: 100,
  cut: false,
  retries: 0,
});

describe('the progress of a read on a terminal', () => {
  it('redraws one line in place for every chunk and leaves the answer below it', () => {
    const term = fakeTerminal();
    let now = 0;
    const progress = new Progress('bar', term, () => now);
    progress.say('book.txt: 4 chunks');
    for (const k of [1, 2, 3, 4]) {
      now += 1000;
      progress.readStep(step(k));
    }
    progress.done();
    progress.say('Read 4 chunks in 4.0 s');
    term.write('The answer.\n');
    const shown = screen(term.text());
    expect(shown).toHaveLength(4);
    expect(shown[0]).toBe('book.txt: 4 chunks');
    expect(shown[1]).toMatch(/^\[#{20}\] chunk 4\/4 · 100% · memory 400 tokens · 1,000 tokens\/s · 4\.0 s elapsed · answering$/);
    expect(shown.slice(2)).toEqual(['Read 4 chunks in 4.0 s', 'The answer.']);
    // Four steps drawn, yet no line per chunk is left on the screen.
    expect(term.text().match(/chunk \d\/4/g)).toHaveLength(4);
  });

  it('says the time left from the steps this run has timed', () => {
    const term = fakeTerminal();
    let now = 0;
    const progress = new Progress('bar', term, () => now);
    now = 2000;
    progress.readStep({ ...step(1, 10), ms: 2000 });
    // Nine chunks and the answer left at 2 s each.
    expect(screen(term.text()).at(-1)).toContain('2.0 s elapsed · about 20.0 s left');
  });

  it('draws an evaluation as samples done, the current file and the time left', () => {
    const term = fakeTerminal();
    let now = 0;
    const progress = new Progress('bar', term, () => now);
    now = 30_000;
    progress.sample('[1/3] eval_50.json #1: …', { done: 1, total: 3, label: 'eval_50.json #1' });
    expect(screen(term.text())).toEqual([expect.stringMatching(/samples 1\/3 · eval_50\.json #1 · 30\.0 s elapsed · about 1 min 00 s left$/)]);
  });

  it('keeps a message above the line and draws the line again at the next step', () => {
    const term = fakeTerminal();
    const progress = new Progress('bar', term, () => 0);
    progress.readStep(step(1));
    progress.say('  step 2: the server is busy. Retrying in 1.0 s (retry 1).');
    progress.readStep(step(2));
    const shown = screen(term.text());
    expect(shown).toEqual(['  step 2: the server is busy. Retrying in 1.0 s (retry 1).', expect.stringContaining('chunk 2/4')]);
  });

  it('never draws a line wider than the terminal, which would wrap and stay behind, and keeps the count and time left in it', () => {
    const term = fakeTerminal(40);
    let now = 0;
    const progress = new Progress('bar', term, () => now);
    for (const k of [1, 2]) {
      now += 1000;
      progress.readStep({ ...step(k), place: 'Persuasion · Chapter 4' });
    }
    const shown = screen(term.text());
    expect(shown).toHaveLength(1);
    expect(shown[0]!.length).toBeLessThanOrEqual(39);
    // The gauge, the place, the speed, the memory and the elapsed time give way; the count and the time left stay.
    expect(shown[0]).toBe('chunk 2/4 · 50% · about 3.0 s left');
  });

  it('gives the parts back as the terminal widens, the gauge last', () => {
    const drawn = (columns: number) => {
      const term = fakeTerminal(columns);
      let now = 0;
      const progress = new Progress('bar', term, () => now);
      now = 2000;
      progress.readStep({ ...step(2), place: 'Persuasion · Chapter 4' });
      return screen(term.text())[0];
    };
    const all = '[##########----------] chunk 2/4 · 50% · Persuasion · Chapter 4 · memory 200 tokens · 1,000 tokens/s · 2.0 s elapsed · about 3.0 s left';
    expect(drawn(160)).toBe(all);
    expect(drawn(all.length)).toBe(all.replace('[##########----------] ', ''));
    expect(drawn(all.length - 23)).toBe(all.replace('[##########----------] ', '').replace(' · Persuasion · Chapter 4', ''));
  });

  it('draws a read of several questions as the chunks the question furthest behind has read and how many questions are still writing', () => {
    const term = fakeTerminal(160);
    let now = 0;
    const progress = new Progress('bar', term, () => now);
    now = 3000;
    // q1 and q3 have read two chunks, q2 one: the read as a whole is at chunk 1; one of the three has answered or failed.
    progress.questionStep({ ...step(2), question: 3, questions: 3, writing: 2, slowest: 1 });
    expect(screen(term.text())).toEqual([
      '[#####---------------] chunk 1/4 · 25% · 2 of 3 questions writing · memory 200 tokens · 333 tokens/s · 3.0 s elapsed · about 4.0 s left',
    ]);
  });

  it('keeps the place, the memory size (the smallest and largest of the questions’ memories) and the read’s speed on the line of several questions', () => {
    const term = fakeTerminal(200);
    let now = 0;
    const progress = new Progress('bar', term, () => now);
    const at = { questions: 3, writing: 3, slowest: 1, place: 'Chapter 4' };
    now = 1000;
    progress.questionStep({ ...step(1), ...at, question: 1, memoryTokens: 1200 });
    progress.questionStep({ ...step(1), ...at, question: 2, memoryTokens: 300 });
    now = 2000;
    progress.questionStep({ ...step(1), ...at, question: 3, memoryTokens: 700 });
    // Three steps of 1,000 tokens each in 2 s: the questions' requests overlap, so the speed is the read's, not one request's.
    expect(screen(term.text())).toEqual([
      '[#####---------------] chunk 1/4 · 25% · Chapter 4 · 3 of 3 questions writing · memory 300–1,200 tokens · 1,500 tokens/s · 2.0 s elapsed · about 4.0 s left',
    ]);
  });

  it('draws on a terminal that reports no size as on one of 80 columns', () => {
    const term = Object.assign(fakeTerminal(), { columns: 0, rows: 0 });
    const progress = new Progress('bar', term, () => 1000);
    progress.readStep(step(1));
    const shown = screen(term.text());
    expect(shown).toEqual([expect.stringContaining('chunk 1/4')]);
    expect(shown[0]!.length).toBeLessThanOrEqual(79);
  });
});

describe('the progress when piped, and with --quiet', () => {
  it('writes the same line per chunk as before when piped', () => {
    const pipe = Object.assign(fakeTerminal(), { isTTY: false });
    const progress = new Progress(progressMode({}, pipe), pipe);
    progress.readStep(step(1));
    progress.readStep({ ...step(2), cut: true, retries: 2, ms: 1234 });
    progress.done();
    expect(pipe.text()).toBe('chunk 1/4 (25%) · memory 100 tokens · 1.0 s\nchunk 2/4 (50%) · memory 200 tokens · 1.2 s · memory cut at its cap · 2 retries\n');
    expect(readStepLine(step(4))).toBe('chunk 4/4 (100%) · memory 400 tokens · 1.0 s');
    // Counts past a thousand have their separators, as every number the command line prints.
    expect(readStepLine({ ...step(1015, 1016), memoryTokens: 1024 })).toBe('chunk 1,015/1,016 (100%) · memory 1,024 tokens · 1.0 s');
  });

  it('writes a line per chunk of each question when piped, naming the question and how many are still writing', () => {
    const pipe = Object.assign(fakeTerminal(), { isTTY: false });
    const progress = new Progress(progressMode({}, pipe), pipe);
    progress.questionStep({ ...step(1), question: 2, questions: 3, writing: 3, slowest: 1 });
    expect(pipe.text()).toBe('q2 chunk 1/4 (25%) · memory 100 tokens · 1.0 s · 3 of 3 questions writing\n');
    expect(questionStepLine({ ...step(4), question: 1, questions: 3, writing: 2, slowest: 4 })).toBe(
      'q1 chunk 4/4 (100%) · memory 400 tokens · 1.0 s · 2 of 3 questions writing',
    );
  });

  it('writes nothing but errors with --quiet', () => {
    const term = fakeTerminal();
    const progress = new Progress(progressMode({ quiet: true }, term), term);
    progress.say('book.txt: 4 chunks');
    progress.readStep(step(1));
    progress.sample('[1/1] x', { done: 1, total: 1, label: 'x' });
    progress.error('The server refused the request.');
    expect(term.text()).toBe('The server refused the request.\n');
  });

  it('takes --progress lines on a terminal and refuses a mode it does not know', () => {
    expect(progressMode({ progress: 'lines' }, fakeTerminal())).toBe('lines');
    expect(progressMode({}, fakeTerminal())).toBe('bar');
    expect(() => progressMode({ progress: 'dots' }, fakeTerminal())).toThrow(UsageError);
  });

  it('writes durations in seconds, minutes or hours', () => {
    expect([duration(4321), duration(125_000), duration(3_780_000)]).toEqual(['4.3 s', '2 min 05 s', '1 h 03 min']);
  });
});
