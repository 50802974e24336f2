import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { memoryFromReply } from '../src/core/answer';
import type { InfmemSteps } from '../src/core/infmem/loop';
import type { Reply } from '../src/core/infmem/thinking';
import { pyRound } from '../src/core/pytext';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { infmemPrediction } from '../src/eval/infmem-read';
import { readInfmemItem } from '../src/eval/infmem-item';
import { paperF1, paperMetrics, scorePrediction } from '../src/eval/paper-score';
import { hasPython, runPython } from './support/python';

const RULER_HQA = readFileSync(new URL('./support/infmem_ruler_hqa.py', import.meta.url), 'utf8');

/** Final generations made for this test (thought included), each where a difference in extraction or scoring could hide. */
const CASES: { name: string; generation: string; answers: string[] }[] = [
  {
    name: 'a thought, then the phrase in bold',
    generation: 'Checking the memory.</think>\n\nTherefore, the answer is **Lake Oster**.',
    answers: ['Lake Oster'],
  },
  { name: 'no thought at all', generation: 'Therefore, the answer is Lake Oster', answers: ['Lake Oster'] },
  { name: 'the phrase capitalised only (case as written)', generation: 'The answer is Lake Oster.', answers: ['Lake Oster'] },
  { name: 'the last of two phrases', generation: 'the answer is Tavik. No: the answer is copper bells.', answers: ['copper bells'] },
  { name: 'nothing after the phrase but a dot', generation: 'I cannot say what the answer is.', answers: ['Aume'] },
  { name: 'an empty final reply (scored 0, not left out)', generation: '', answers: ['Aume'] },
  { name: 'a thought and nothing after it', generation: '<think>The notes say Aume.</think>\n  ', answers: ['Aume'] },
  { name: 'two thoughts closed', generation: 'a</think>b the answer is Essel</think>\nSo the answer is Morrow.', answers: ['Essel'] },
  { name: "Python's whitespace around the answer", generation: 'the answer is\u3000Essel\u00a0\u2029', answers: ['Essel'] },
  { name: 'the R1 end markers', generation: 'the answer is Aume<｜end▁of▁sentence｜>', answers: ['Aume'] },
  { name: 'dots on both ends', generation: 'the answer is ...Aume...', answers: ['Aume'] },
  { name: 'an answer that normalises to nothing (contained in any reference)', generation: 'the answer is a.', answers: ['Essel'] },
  { name: 'yes against no', generation: 'the answer is yes', answers: ['no'] },
  { name: 'Yes. against yes', generation: 'the answer is Yes.', answers: ['yes'] },
  { name: 'an f1 of exactly 0.125, rounded half to even', generation: 'the answer is k1 p2 p3 p4 p5 p6 p7', answers: ['k1 g2 g3 g4 g5 g6 g7 g8 g9'] },
  { name: 'an f1 of 2/3', generation: 'the answer is the river Aume', answers: ['Aume'] },
  { name: 'punctuation and articles', generation: 'the answer is The "1,000" bells!', answers: ['1000 bells'] },
  { name: 'a non-ASCII apostrophe kept', generation: 'the answer is Varga’s workshop', answers: ["Varga's workshop"] },
];

interface Scored {
  final: string;
  prediction: string | null;
  sub_em: number;
  em: number;
  f1: number;
}

/** The app's scoring of one final generation: the loop's final, then InfMem's extraction and the paper's scorer. */
function appScored(generation: string, answers: string[]): Scored & { whole: ReturnType<typeof scorePrediction> } {
  const final = memoryFromReply(generation, 'verbatim');
  const prediction = infmemPrediction(final);
  const whole = scorePrediction(prediction, answers);
  return { final, prediction, sub_em: whole.sub_em, em: whole.em, f1: paperF1(whole), whole };
}

describe("InfMem's HotpotQA scoring (ruler_hqa.py)", () => {
  it.runIf(hasPython)('extracts and scores every final generation as a Python rendition of the official evaluation does', () => {
    const python = runPython<{ items: Scored[]; averages: { sub_em: number; em: number; f1: number } }>(RULER_HQA, CASES);
    const ours = CASES.map((c) => appScored(c.generation, c.answers));
    CASES.forEach((c, i) => {
      const { whole: _, ...mine } = ours[i]!;
      expect(mine, c.name).toEqual(python.items[i]);
    });
    const metrics = paperMetrics(ours.map((o) => o.whole))!;
    expect({ sub_em: pyRound(metrics.sub_em, 2), em: pyRound(metrics.em, 2), f1: pyRound(metrics.f1, 2) }).toEqual(python.averages);
  });

  it('reads the phrase as written, after the last thought, and scores an answerless reply 0', () => {
    expect(infmemPrediction('The answer is Paris.')).toBeNull();
    expect(infmemPrediction('x</think> so the answer is **Paris**.')).toBe('Paris');
    expect(infmemPrediction('the answer is .')).toBe('');
    expect(scorePrediction(infmemPrediction(''), ['Paris'])).toEqual({ sub_em: 0, em: 0, f1: 0 });
  });
});

describe('a RULER-HotpotQA item read by InfMem', () => {
  let codec: QwenTokenizer;
  beforeAll(async () => {
    codec = await loadQwenTokenizer();
  });

  const reply = (text: string, tokens?: [number, number]): Reply => ({
    text,
    requests: tokens ? [{ prompt: '', maxTokens: 1, temperature: 0, topP: 1 }] : [],
    completions: tokens ? [{ text, promptTokens: tokens[0], completionTokens: tokens[1] }] : [],
  });
  const item = (context: string) => ({ index: 0, context, question: 'Which lake?', answers: ['Lake Oster'], numDocs: 50 });

  it('stops where the planner votes, counts the chunks read, the calls and their tokens, and scores the final reply', async () => {
    let plans = 0;
    const steps: InfmemSteps = {
      initialMemory: 'No previous memory',
      // A search before the first chunk, then stop votes: with an early stop of 2 the read ends before chunk 3.
      plan: async () => reply(plans++ === 0 ? '✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": "lake"}' : 'STOP', [100, 5]),
      write: async (v) => reply(`${v.memory} +`, [200, 10]),
      answer: async () => reply('Looked.</think>\nTherefore, the answer is **Lake Oster**.', [50, 8]),
    };
    const context = 'Lake Oster lies north. '.repeat(4000);
    const r = await readInfmemItem(item(context), 'eval_50.json', { codec, stepsFor: () => steps, earlyStop: 2 });
    expect(r.chunks).toBeGreaterThanOrEqual(4);
    expect(r).toMatchObject({ chunksRead: 2, requests: 3 + 2 + 1, promptTokens: 300 + 400 + 50, completionTokens: 15 + 20 + 8 });
    expect(r.prediction).toBe('Lake Oster');
    expect(r.scores).toEqual({ sub_em: 1, em: 1, f1: 1 });
    expect(r.failed).toBeUndefined();
  });

  it('counts what steps without a server were given and wrote, one call each', async () => {
    const steps: InfmemSteps = {
      initialMemory: 'none',
      plan: async () => reply('STOP'),
      write: async () => reply('never'),
      answer: async () => reply('the answer is Lake Oster'),
    };
    const r = await readInfmemItem(item('Short.'), 'f', { codec, stepsFor: () => steps, earlyStop: 1 });
    expect(r).toMatchObject({ chunks: 1, chunksRead: 0, requests: 2 });
    const counted = codec.count('Which lake?') * 2 + codec.count('none') * 2 + codec.count(r.reply) + codec.count('STOP');
    expect(r.promptTokens + r.completionTokens).toBe(counted + codec.count('Current retrieval step: 1  Maximum allowed retrieval steps: 1\n'));
  });

  it('leaves an item whose request failed out, saying why', async () => {
    const steps: InfmemSteps = {
      initialMemory: 'none',
      plan: async () => {
        throw new Error('HTTP 500 from the server');
      },
      write: async () => reply(''),
      answer: async () => reply(''),
    };
    const r = await readInfmemItem(item('Short.'), 'f', { codec, stepsFor: () => steps, earlyStop: 3 });
    expect(r.scores).toBeNull();
    expect(r.failed).toBe('HTTP 500 from the server');
  });
});
