import { describe, expect, it } from 'vitest';
import { BudgetError, DEFAULT_CHUNK_TOKENS, DEFAULT_MEMORY_TOKENS } from '../src/core/budget';
import { DEFAULT_READ_SETTINGS, MAX_SEED, planRead, questionPlan, questionSeed, readSettings, readSettingsProblem } from '../src/core/plan';
import { seededRandom } from '../src/core/random';
import { DEFAULT_TEMPLATES, templateOverhead } from '../src/core/prompts';
import { methodSettings } from '../src/eval/method';
import { sweepSpec } from '../src/eval/sweep';

const count = (s: string) => s.split(/\s+/).filter(Boolean).length;

describe('read plan', () => {
  it('defaults to the paper: 5000-token chunks, a 1024-token memory, temperature 0.7, top p 0.95, a random seed', () => {
    expect(DEFAULT_READ_SETTINGS).toEqual({ chunkTokens: DEFAULT_CHUNK_TOKENS, memoryTokens: DEFAULT_MEMORY_TOKENS, temperature: 0.7, topP: 0.95 });
    expect(DEFAULT_CHUNK_TOKENS).toBe(5000);
    expect(DEFAULT_MEMORY_TOKENS).toBe(1024);
    expect('seed' in DEFAULT_READ_SETTINGS).toBe(false);
  });

  it('sweeps and the paper method start from the same defaults as a read', () => {
    const { chunkTokens, memoryTokens, temperature, topP } = sweepSpec({ tasks: [], lengths: [] });
    expect({ chunkTokens, memoryTokens, temperature, topP }).toEqual(DEFAULT_READ_SETTINGS);
    const method = methodSettings({ method: 'recurrent', templates: DEFAULT_TEMPLATES });
    expect({ chunkTokens: method.chunkTokens, memoryTokens: method.memoryTokens, temperature: method.temperature, topP: method.topP }).toEqual(
      DEFAULT_READ_SETTINGS,
    );
  });

  it('fills what is absent with the defaults and leaves other keys behind', () => {
    expect(readSettings({ memoryTokens: 256, seed: null })).toEqual({ ...DEFAULT_READ_SETTINGS, memoryTokens: 256 });
    expect(readSettings({ chunkTokens: 800, seed: 7, question: 'kept out' } as never)).toEqual({ ...DEFAULT_READ_SETTINGS, chunkTokens: 800, seed: 7 });
  });

  it('accepts every setting at both ends of its range', () => {
    for (const s of [
      { chunkTokens: 100, memoryTokens: 64, temperature: 0, topP: 1e-9, seed: 0 },
      { chunkTokens: 100_000, memoryTokens: 8192, temperature: 2, topP: 1, seed: MAX_SEED },
    ]) {
      expect(readSettingsProblem(s)).toBeNull();
    }
    expect(readSettingsProblem({})).toBeNull();
  });

  it('names the first setting out of range and says what to give instead', () => {
    const cases: [Record<string, number>, string, RegExp][] = [
      [{ chunkTokens: 99 }, 'chunkTokens', /chunk size must be a whole number of tokens from 100 to 100,000/],
      [{ chunkTokens: 100_001 }, 'chunkTokens', /chunk size/],
      [{ chunkTokens: 500.5 }, 'chunkTokens', /whole number/],
      [{ memoryTokens: 63 }, 'memoryTokens', /memory size must be a whole number of tokens from 64 to 8,192/],
      [{ memoryTokens: 200_000 }, 'memoryTokens', /memory size/],
      [{ temperature: -0.1 }, 'temperature', /temperature must be a number from 0 to 2/],
      [{ temperature: Number.NaN }, 'temperature', /temperature/],
      [{ topP: 0 }, 'topP', /Top p must be a number above 0 and at most 1/],
      [{ topP: 1.01 }, 'topP', /Top p/],
      [{ seed: -1 }, 'seed', /seed must be a whole number from 0 to 2,147,483,647; leave it out for a random one/],
      [{ seed: MAX_SEED + 1 }, 'seed', /seed/],
      [{ chunkTokens: 50, seed: -1 }, 'chunkTokens', /chunk size/],
    ];
    for (const [settings, setting, message] of cases) {
      const problem = readSettingsProblem(settings);
      expect(problem?.setting).toBe(setting);
      expect(problem?.message).toMatch(message);
    }
  });

  it('plans the chunk the window allows and keeps the size asked for beside it', () => {
    const room = { contextWindow: 4096, count, updateTemplate: DEFAULT_TEMPLATES.update, questionTokens: 10 };
    const plan = planRead({ ...DEFAULT_READ_SETTINGS, memoryTokens: 1024, seed: 3 }, room);
    // What is left of the window once the template, the question, the memory and the reply are in.
    const chunkTokens = 4096 - templateOverhead(DEFAULT_TEMPLATES.update, count) - 10 - 2 * 1024;
    expect(plan).toEqual({ requestedChunkTokens: 5000, chunkTokens, memoryTokens: 1024, contextTokens: 4096, temperature: 0.7, topP: 0.95, seed: 3 });
    const roomy = planRead({ ...DEFAULT_READ_SETTINGS, chunkTokens: 800 }, { ...room, contextWindow: 32_768 });
    expect(roomy).toMatchObject({ requestedChunkTokens: 800, chunkTokens: 800 });
    expect('seed' in roomy).toBe(false);
  });

  it('refuses a plan that leaves no room for the book, saying what to shorten', () => {
    const room = { contextWindow: 2000, count, updateTemplate: DEFAULT_TEMPLATES.update, questionTokens: 10 };
    expect(() => planRead({ ...DEFAULT_READ_SETTINGS, memoryTokens: 1024 }, room)).toThrow(BudgetError);
    expect(() => planRead({ ...DEFAULT_READ_SETTINGS, memoryTokens: 1024 }, room)).toThrow(/Shorten the question or choose a smaller memory size/);
  });
});

describe('the seeds of a read of several questions', () => {
  const SEEDS = [0, 1, 7, 42, 123_456, MAX_SEED - 1, MAX_SEED];

  it('gives question 1 the read’s own seed, so a read of one question samples as before', () => {
    for (const seed of SEEDS) expect(questionSeed(seed, 0)).toBe(seed);
    const plan = { temperature: 0.7, topP: 0.95, seed: 42 };
    expect(questionPlan(plan, 0)).toEqual(plan);
  });

  it('gives each question of a read its own seed, a whole number the engines take, and so its own random stream', () => {
    for (const seed of SEEDS) {
      const seeds = Array.from({ length: 64 }, (_, i) => questionSeed(seed, i));
      expect(new Set(seeds).size).toBe(64);
      for (const s of seeds) expect(Number.isInteger(s) && s >= 0 && s <= MAX_SEED).toBe(true);
      const stream = (s: number) => Array.from({ length: 4 }, seededRandom(s));
      expect(stream(seeds[1]!)).not.toEqual(stream(seeds[0]!));
      expect(stream(seeds[2]!)).not.toEqual(stream(seeds[1]!));
    }
  });

  it('gives the same seeds to the same read planned twice, and leaves a read without a seed to random ones', () => {
    const plan = { chunkTokens: 5000, temperature: 0.7, topP: 0.95, seed: 7 };
    const once = [0, 1, 2].map((i) => questionPlan(plan, i));
    expect([0, 1, 2].map((i) => questionPlan({ ...plan }, i))).toEqual(once);
    expect(once.map((p) => ({ ...p, seed: 0 }))).toEqual([0, 1, 2].map(() => ({ ...plan, seed: 0 })));
    const unseeded: { chunkTokens: number; temperature: number; topP: number; seed?: number } = { chunkTokens: 5000, temperature: 0.7, topP: 0.95 };
    expect(questionPlan(unseeded, 2)).toEqual(unseeded);
    expect('seed' in questionPlan(unseeded, 2)).toBe(false);
  });
});

describe('the Read form settings', () => {
  it('are the read settings plus the form’s own, and each problem is said in the settings panel’s words', async () => {
    const { DEFAULT_SETTINGS, settingsProblem } = await import('../src/ui/settings');
    expect(readSettings(DEFAULT_SETTINGS)).toEqual(DEFAULT_READ_SETTINGS);
    expect(settingsProblem(DEFAULT_SETTINGS)).toBeNull();
    expect(settingsProblem({ ...DEFAULT_SETTINGS, chunkTokens: 50 })).toBe('Chunk size must be a whole number of tokens from 100 to 100,000.');
    expect(settingsProblem({ ...DEFAULT_SETTINGS, memoryTokens: 9000 })).toBe('Memory size must be a whole number of tokens from 64 to 8,192.');
    expect(settingsProblem({ ...DEFAULT_SETTINGS, temperature: 3 })).toBe('Temperature must be a number from 0 to 2.');
    expect(settingsProblem({ ...DEFAULT_SETTINGS, topP: 0 })).toBe('Top p must be a number above 0 and at most 1.');
    expect(settingsProblem({ ...DEFAULT_SETTINGS, seed: 1.5 })).toBe('Seed must be a whole number from 0 to 2,147,483,647, or empty.');
    expect(settingsProblem({ ...DEFAULT_SETTINGS, seed: null })).toBeNull();
  });

  it('say beside each number field what is wrong with it alone, an emptied field included, and nothing for a value Read takes', async () => {
    const { DEFAULT_SETTINGS, fieldProblem } = await import('../src/ui/settings');
    const wrong = { ...DEFAULT_SETTINGS, chunkTokens: 50, memoryTokens: Number.NaN, skimPercent: 0 };
    expect(fieldProblem(wrong, 'chunkTokens')).toBe('Chunk size must be a whole number of tokens from 100 to 100,000.');
    expect(fieldProblem(wrong, 'memoryTokens')).toBe('Memory size must be a whole number of tokens from 64 to 8,192.');
    expect(fieldProblem(wrong, 'skimPercent')).toBe('The share of chunks to read in skim mode must be from 1 to 100 percent.');
    expect(fieldProblem(wrong, 'temperature')).toBeNull();
    expect(fieldProblem({ ...DEFAULT_SETTINGS, topP: 0 }, 'topP')).toBe('Top p must be a number above 0 and at most 1.');
    expect(fieldProblem({ ...DEFAULT_SETTINGS, seed: -1 }, 'seed')).toBe('Seed must be a whole number from 0 to 2,147,483,647, or empty.');
    expect(fieldProblem({ ...DEFAULT_SETTINGS, seed: null }, 'seed')).toBeNull();
    for (const field of ['chunkTokens', 'memoryTokens', 'temperature', 'topP', 'skimPercent'] as const)
      expect(fieldProblem(DEFAULT_SETTINGS, field)).toBeNull();
  });
});
