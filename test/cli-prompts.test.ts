import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PromptFileSpec, sha256Hex } from '../src/core/prompt-sets';
import { PromptOptionError, resolveCliPrompts } from '../src/cli/prompts';
import { STANDIN, STANDIN_BOXED, standinSpecs } from './support/prompt-standins';
import { type OpenAITestServer, startOpenAIServer } from './support/openai-server';
import { serveFiles } from './support/serve-fixtures';
import { runCli } from './support/cli';

const PATH = 'taskutils/memory_eval/utils/recurrent.py';

let dir: string;
let specs: PromptFileSpec[];
/** A mirror of the pinned commit's files, serving the stand-ins at their paths. */
let mirror: { url: string; close(): Promise<void> };
/** A mirror serving an edited copy: the wrong hash. */
let tampered: { url: string; close(): Promise<void> };
let server: OpenAITestServer;

function mirrorOf(root: string, files: Record<string, Buffer>): void {
  for (const [path, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), bytes);
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memagent-cli-prompts-'));
  specs = await standinSpecs();
  mirrorOf(join(dir, 'mirror'), { [PATH]: STANDIN, 'taskutils/memory_eval/utils/recurrent_boxed.py': STANDIN_BOXED });
  mirrorOf(join(dir, 'tampered'), { [PATH]: Buffer.from(STANDIN.toString('utf8').replace('Stand-in', 'Tampered')) });
  [mirror, tampered, server] = await Promise.all([
    serveFiles({ port: 0, roots: { '/': join(dir, 'mirror') } }),
    serveFiles({ port: 0, roots: { '/': join(dir, 'tampered') } }),
    startOpenAIServer(),
  ]);
});

afterAll(async () => {
  await Promise.all([mirror.close(), tampered.close(), server.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const offline = (async () => {
  throw new TypeError('fetch failed');
}) as unknown as typeof fetch;

describe('choosing the prompts of a command-line read', () => {
  it('fetches MemAgent (paper) for a model engine, keeps it in the cache, and reads it from there offline', async () => {
    const cacheDir = join(dir, 'cache-paper');
    const said: string[] = [];
    const first = await resolveCliPrompts({ 'prompts-base': mirror.url }, 'openai', { specs, cacheDir, say: (l) => said.push(l) });
    expect(first.set.id).toBe('memagent');
    expect(first.record).toEqual({
      set: 'memagent',
      label: 'MemAgent (paper)',
      answerStyle: 'recurrent',
      file: { path: PATH, commit: '76b7a658988e4ea53d7388a62de6c0ce79084146', sha256: specs[0]!.sha256, source: `${mirror.url}/${PATH}` },
    });
    expect(said).toEqual([]);
    expect(readdirSync(join(cacheDir, 'prompts'))).toEqual([`${specs[0]!.sha256}-recurrent.py`]);
    const again = await resolveCliPrompts({}, 'openai', { specs, cacheDir, fetch: offline });
    expect(again.set.templates).toEqual(first.set.templates);
    expect(again.record.file?.source).toMatch(/^cache /);
  });

  it('falls back to the app’s wording while the file has never been had, and says so on the read', async () => {
    const said: string[] = [];
    const r = await resolveCliPrompts({}, 'openai', { specs, cacheDir: join(dir, 'cache-none'), fetch: offline, say: (l) => said.push(l) });
    expect(r.set.id).toBe('app');
    expect(r.record.note).toMatch(/^MemAgent \(paper\) was not used: .*recurrent\.py could not be fetched \(fetch failed\)/);
    expect(said[0]).toMatch(/This read uses this app's wording instead\. Download .* --prompts-file PATH, or give --prompts-base URL/);
    // The extractive engine reads no prompts: it never fetches.
    expect((await resolveCliPrompts({}, 'extractive', { specs, fetch: offline, cacheDir: join(dir, 'cache-none') })).record).toEqual({
      set: 'app',
      label: "This app's wording",
      answerStyle: 'lenient',
    });
  });

  it('refuses a mirror’s file whose hash is not the pinned one, keeping nothing', async () => {
    const cacheDir = join(dir, 'cache-tampered');
    await expect(resolveCliPrompts({ prompts: 'memagent', 'prompts-base': tampered.url }, 'openai', { specs, cacheDir })).rejects.toThrow(
      new RegExp(`^MemAgent \\(paper\\): recurrent\\.py was refused: its SHA-256 is [0-9a-f]{64}, not ${specs[0]!.sha256}`),
    );
    expect(existsSync(join(cacheDir, 'prompts'))).toBe(false);
    // Asked for by name and not to be had: refused with how to get it, never a silent fallback.
    await expect(resolveCliPrompts({ prompts: 'memagent-boxed' }, 'openai', { specs, cacheDir, fetch: offline })).rejects.toThrow(/--prompts-file PATH/);
  });

  it('takes a local copy with --prompts-file, knowing which file it is by its hash', async () => {
    const copy = join(dir, 'my-copy.py');
    writeFileSync(copy, STANDIN_BOXED);
    const cacheDir = join(dir, 'cache-file');
    const r = await resolveCliPrompts({ 'prompts-file': copy }, 'openai', { specs, cacheDir, fetch: offline });
    expect(r.record).toMatchObject({ set: 'memagent-boxed', answerStyle: 'recurrent-boxed', file: { sha256: specs[1]!.sha256, source: `file ${copy}` } });
    // Kept for later reads without the flag.
    expect((await resolveCliPrompts({ prompts: 'memagent-boxed' }, 'openai', { specs, cacheDir, fetch: offline })).set.templates).toEqual(r.set.templates);
    const other = join(dir, 'other.py');
    writeFileSync(other, 'TEMPLATE = "x"\n');
    // Hashed before the call: an await between the call and `rejects` would leave its rejection unhandled for a moment.
    const otherHash = await sha256Hex(Buffer.from('TEMPLATE = "x"\n'));
    await expect(resolveCliPrompts({ 'prompts-file': other }, 'openai', { specs, cacheDir })).rejects.toThrow(
      new RegExp(`other\\.py was refused: its SHA-256 is ${otherHash}, which is neither recurrent\\.py \\(${specs[0]!.sha256}\\)`),
    );
    await expect(resolveCliPrompts({ 'prompts-file': copy, prompts: 'app' }, 'openai', { specs, cacheDir })).rejects.toThrow(PromptOptionError);
  });

  it('reads edited templates from a JSON file, with the official slot names too', async () => {
    const file = join(dir, 'edited.json');
    writeFileSync(file, JSON.stringify({ update: 'U <problem> \n{prompt}\n{memory}\n{chunk}\n', final: 'F {prompt} {memory}' }));
    const r = await resolveCliPrompts({ prompts: file }, 'openai', { specs, fetch: offline, cacheDir: join(dir, 'cache-none') });
    expect(r.record).toEqual({ set: 'custom', label: 'Edited templates', answerStyle: 'lenient', note: `templates from ${file}` });
    writeFileSync(file, JSON.stringify({ update: '{prompt} {memory}', final: '{prompt} {memory}' }));
    await expect(resolveCliPrompts({ prompts: file }, 'openai', { specs })).rejects.toThrow(/must contain \{section\} \(or \{chunk\}\)/);
    await expect(resolveCliPrompts({ prompts: 'papers' }, 'openai', { specs })).rejects.toThrow(/--prompts is memagent, memagent-boxed, app or a JSON file/);
    await expect(resolveCliPrompts({ 'prompts-base': 'ftp://mirror' }, 'openai', { specs })).rejects.toThrow(/--prompts-base: "ftp:\/\/mirror" is not an http/);
  });
});

const memagent = (args: string[], env: Record<string, string>) => runCli(args, { env });

describe('memagent read with the pinned hashes', () => {
  it('refuses a file that is not the pinned one, and records on the journal that the app’s wording was used instead', async () => {
    const book = join(dir, 'book.txt');
    writeFileSync(book, 'Alice met Bob at the harbour in 1921.');
    const env = { MEMAGENT_CACHE_DIR: join(dir, 'cli-cache') };
    const base = ['read', book, '-q', 'Where did Alice meet Bob?', '--base-url', server.url, '--prompts-base', mirror.url];
    // The stand-in is not the official file: named, it is refused outright.
    const named = await memagent([...base, '--prompts', 'memagent', '--out', join(dir, 'named.jsonl')], env);
    expect(named.code).toBe(1);
    expect(named.stderr).toMatch(
      /MemAgent \(paper\): recurrent\.py was refused: its SHA-256 is [0-9a-f]{64}, not 1e0082a7a85a97663eb5e747ae7d925c153acab8f403c026b15debd1a1b97e41/,
    );
    // By default the read goes on with the app's wording, and says why.
    const from = server.chatBodies.length;
    const auto = await memagent([...base, '--out', join(dir, 'auto.jsonl')], env);
    expect(auto.code, auto.stderr).toBe(0);
    expect(auto.stderr).toMatch(/MemAgent \(paper\) was not used: recurrent\.py was refused/);
    const header = JSON.parse(readFileSync(join(dir, 'auto.jsonl'), 'utf8').split('\n')[0]!) as { prompts: { set: string; note: string } };
    expect(header.prompts.set).toBe('app');
    expect(header.prompts.note).toMatch(/was refused: its SHA-256/);
    expect((server.chatBodies[from]!.messages as { content: string }[])[0]!.content).toMatch(/^You are reading a long article/);
    expect(existsSync(join(dir, 'cli-cache', 'prompts'))).toBe(false);
  }, 60_000);
});
