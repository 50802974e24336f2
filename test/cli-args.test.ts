import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseFlags, settingsFlags, UsageError } from '../src/cli/flags';
import { engineConfigOf, engineIdOf, withDefaultEngine } from '../src/cli/engine';
import { DEFAULT_HAYSTACK, loadHaystack } from '../src/cli/eval';
import { runCli as memagent } from './support/cli';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function usageError(work: () => unknown): string {
  try {
    work();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('command-line flags', () => {
  it('take the common flags beside a command’s own, and refuse one neither knows', () => {
    const { values, positionals } = parseFlags(['book.txt', '--chunk', '800', '--base-url', 'http://x/v1', '-q', 'Who?'], {
      question: { type: 'string', short: 'q' },
    });
    expect(positionals).toEqual(['book.txt']);
    expect(values).toMatchObject({ chunk: '800', 'base-url': 'http://x/v1', question: 'Who?' });
    expect(usageError(() => parseFlags(['--chunks', '800'], {}))).toMatch(/--chunks/);
    expect(usageError(() => parseFlags(['--chunk'], {}))).toMatch(/--chunk/);
  });

  it('give the read settings that are set, leaving the rest to the plan’s defaults', () => {
    expect(settingsFlags({}, { seed: true })).toEqual({});
    expect(settingsFlags({ chunk: '800', memory: '256', temperature: '0', 'top-p': '1', seed: '7' }, { seed: true })).toEqual({
      chunkTokens: 800,
      memoryTokens: 256,
      temperature: 0,
      topP: 1,
      seed: 7,
    });
    // eval's --seed seeds the sweep, not the sampling.
    expect(settingsFlags({ seed: '7' }, { seed: false })).toEqual({});
  });

  it('refuse a setting out of the app’s limits, naming the flag, the value and what it takes', () => {
    expect(usageError(() => settingsFlags({ chunk: 'lots' }, { seed: true }))).toBe('--chunk must be a number, got "lots".');
    expect(usageError(() => settingsFlags({ memory: '32' }, { seed: true }))).toBe(
      '--memory 32 cannot be used. The memory size must be a whole number of tokens from 64 to 8,192.',
    );
    expect(usageError(() => settingsFlags({ chunk: '50' }, { seed: false }))).toMatch(
      /^--chunk 50 cannot be used\. The chunk size must be .* from 100 to 100,000\.$/,
    );
    expect(usageError(() => settingsFlags({ 'top-p': '0' }, { seed: true }))).toMatch(/^--top-p 0 cannot be used\. Top p must be a number above 0/);
    expect(usageError(() => settingsFlags({ seed: '-1' }, { seed: true }))).toMatch(/^--seed -1 cannot be used\./);
  });

  it('name an engine: --engine, or a server with --base-url; anything else says what to give', () => {
    expect(engineIdOf({ 'base-url': 'http://127.0.0.1:8000/v1' })).toBe('openai');
    expect(engineIdOf({ engine: 'extractive' })).toBe('extractive');
    expect(usageError(() => engineIdOf({}))).toMatch(/Give --base-url, the address of an OpenAI-compatible server .* or --engine extractive/);
    expect(usageError(() => engineIdOf({ engine: 'gpt' }))).toMatch(/^Unknown engine "gpt"\. Engines: .*extractive/);
    // eval's default: an engine where none is named, never in place of a server or a model that is.
    expect(withDefaultEngine({ context: '4096' }, 'extractive')).toEqual({ context: '4096', engine: 'extractive' });
    expect(withDefaultEngine({ 'base-url': 'http://s/v1' }, 'extractive')).toBeNull();
    expect(withDefaultEngine({ engine: 'webllm' }, 'extractive')).toBeNull();
    expect(withDefaultEngine({ model: 'memagent-14b' }, 'extractive')).toBeNull();
    expect(engineConfigOf({ 'base-url': 'http://s/v1', model: 'm', context: '4096', retries: '2', 'retry-delay': '10' })).toEqual({
      id: 'openai',
      config: { baseUrl: 'http://s/v1', model: 'm', contextWindow: 4096 },
      retry: { maxRetries: 2, baseDelayMs: 10 },
    });
    expect(usageError(() => engineConfigOf({ engine: 'extractive', context: '0' }))).toBe('--context must be a whole number of at least 1, got "0".');
  });

  it('take --in-flight as the server’s requests at once, 1 to 64, and refuse it for an engine on this machine', () => {
    expect(engineConfigOf({ 'base-url': 'http://s/v1', 'in-flight': '1' }).config).toEqual({ baseUrl: 'http://s/v1', requestsAtOnce: 1 });
    expect(engineConfigOf({ 'base-url': 'http://s/v1', 'in-flight': '64' }).config).toMatchObject({ requestsAtOnce: 64 });
    expect(engineConfigOf({ 'base-url': 'http://s/v1' }).config).not.toHaveProperty('requestsAtOnce');
    for (const value of ['0', '65', '2.5', 'many', ' ']) {
      expect(usageError(() => engineConfigOf({ 'base-url': 'http://s/v1', 'in-flight': value }))).toBe(
        `--in-flight must be a whole number from 1 to 64, got "${value}".`,
      );
    }
    expect(usageError(() => engineConfigOf({ engine: 'extractive', 'in-flight': '2' }))).toBe('--in-flight is for a server (--base-url).');
    expect(usageError(() => engineConfigOf({ engine: 'webllm', 'in-flight': '2' }))).toBe('--in-flight is for a server (--base-url).');
  });
});

describe('the haystack book', () => {
  it('is carried in the repository, public domain, without Project Gutenberg’s licence, under 1 MB', () => {
    expect(relative(ROOT, DEFAULT_HAYSTACK)).toBe(join('data', 'haystack', 'frankenstein.txt'));
    expect(statSync(DEFAULT_HAYSTACK).size).toBeLessThanOrEqual(1 << 20);
    const text = readFileSync(DEFAULT_HAYSTACK, 'utf8');
    expect(text).not.toMatch(/Project Gutenberg|gutenberg\.org/i);
    expect(text).toContain('Frankenstein');
  });

  it('fills the essay tasks by default, and its absence is an error that says what to do', async () => {
    expect((await loadHaystack(undefined)).name).toBe('frankenstein.txt');
    const gone = join(ROOT, 'data', 'haystack', 'no-such-book.txt');
    await expect(loadHaystack(undefined, gone)).rejects.toThrow(UsageError);
    await expect(loadHaystack(undefined, gone)).rejects.toThrow(
      `The haystack book this program carries is missing (${gone}): reinstall memagent-web, or give a book with --haystack FILE.`,
    );
    await expect(loadHaystack('missing.txt')).rejects.toThrow('There is no haystack file missing.txt.');
  });
});

describe('memagent eval without an engine named', () => {
  it('evaluates with the extractive engine, as the evaluation page documents, and says so on stderr', async () => {
    const r = await memagent(['eval', '--tasks', 'niah_single_1', '--samples', '1', '--progress', 'lines']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^No --engine or --base-url: evaluating with the extractive engine \(the paper's heuristic memory, no model\)\./);
    expect(r.stdout).toMatch(/^engine extractive; /);
    expect(r.stdout).toMatch(/^niah_single_1\s+100\.0$/m);
  });
});

describe('usage errors', () => {
  it('say what is wrong and where the options are, with exit code 2, before any engine is opened', async () => {
    const [command, engine, setting] = await Promise.all([
      memagent(['summarize']),
      // A model named with no server to ask for it: the engine is not guessed.
      memagent(['eval', '--model', 'memagent-14b', '--tasks', 'niah_single_1']),
      memagent(['eval', '--engine', 'extractive', '--memory', '20000']),
    ]);
    for (const r of [command, engine, setting]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/\nRun memagent --help for the options\.\n$/);
    }
    expect(command.stderr).toMatch(/^Unknown command "summarize": use read, eval, models\./);
    expect(engine.stderr).toMatch(/^Give --base-url/);
    expect(setting.stderr).toMatch(/^--memory 20000 cannot be used\. The memory size must be a whole number of tokens from 64 to 8,192\./);
  });
});
