import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands';

const run = promisify(execFile);
const BIN = new URL('../bin/memagent.js', import.meta.url).pathname;

describe('memagent --help and --version', () => {
  it('lists every command of the command table in the help', async () => {
    const { stdout } = await run('node', [BIN, '--help'], { timeout: 60_000 });
    expect(COMMANDS.map((c) => c.name)).toEqual(expect.arrayContaining(['read', 'eval']));
    for (const c of COMMANDS) expect(stdout).toMatch(new RegExp(`^  ${c.name}\\s+${c.summary}$`, 'm'));
    expect(stdout).toMatch(/^ {2}--version\s/m);
    expect(stdout).toMatch(/^ {2}--help\s/m);
  });

  it('shows in its usage lines the engine of every read and eval the README shows', async () => {
    const { stdout } = await run('node', [BIN, '--help'], { timeout: 60_000 });
    const usage = stdout.split('\nUsage:\n')[1]!.split('\n\n')[0]!;
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const shown = [...readme.matchAll(/(?:memagent|npm run) (read|eval)\b[^\n]*?--engine ([\w-]+)/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(shown).toContainEqual(['read', 'extractive']);
    for (const [command, engine] of shown) expect(usage).toMatch(new RegExp(`^  memagent ${command} .*--engine ${engine} `, 'm'));
  });

  it("prints the package's version and then every command", async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const { stdout } = await run('node', [BIN, '--version'], { timeout: 60_000 });
    const [first, ...rest] = stdout.trimEnd().split('\n');
    expect(first).toBe(`memagent ${version}`);
    expect(rest[0]).toBe('Commands:');
    expect(rest.map((line) => line.trim().split(/\s+/)[0])).toEqual(['Commands:', ...COMMANDS.map((c) => c.name), '--help', '--version']);
  });

  it('lists the same commands in --help and --version', async () => {
    const [help, version] = await Promise.all([run('node', [BIN, '--help'], { timeout: 60_000 }), run('node', [BIN, '--version'], { timeout: 60_000 })]);
    const list = (text: string) =>
      text
        .split('\n\n')
        .find((block) => block.includes('Commands:'))!
        .split('\n')
        .slice(-COMMANDS.length - 2);
    expect(list(help.stdout)).toEqual(list(version.stdout.trimEnd()));
  });

  it("prints, for read --help and eval --help, that command's own usage and options and not the other's", async () => {
    const [whole, read, evaluate] = await Promise.all(
      [['--help'], ['read', '--help'], ['eval', '-h']].map(async (args) => (await run('node', [BIN, ...args], { timeout: 60_000 })).stdout),
    );
    const usage = (text: string) => [...text.matchAll(/^ {2}memagent (\w+) /gm)].map((m) => m[1]);
    expect(new Set(usage(whole!))).toEqual(new Set(['read', 'eval']));
    expect(read).toMatch(/^memagent read: /);
    expect(new Set(usage(read!))).toEqual(new Set(['read']));
    expect(read).toMatch(/^ {2}--question, -q TEXT /m);
    expect(read).toMatch(/^ {2}--base-url URL /m);
    expect(read).not.toMatch(/^ {2}--tasks LIST /m);
    expect(read).not.toContain('Commands:');
    expect(evaluate).toMatch(/^memagent eval: /);
    expect(new Set(usage(evaluate!))).toEqual(new Set(['eval']));
    expect(evaluate).toMatch(/^ {2}--tasks LIST /m);
    expect(evaluate).toMatch(/^ {2}--data FILE /m);
    expect(evaluate).not.toMatch(/^ {2}--question/m);
    // Each command's options are the whole help's, word for word, without saying which commands share them.
    for (const own of [read!, evaluate!]) {
      expect(own).not.toContain('both commands');
      for (const line of own.split('\n').filter((l) => /^ {2}--/.test(l))) expect(whole).toContain(line);
    }
  });

  it('names the commands it knows when given one it does not', async () => {
    const failed = await run('node', [BIN, 'summarise'], { timeout: 60_000 }).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain(`use ${COMMANDS.map((c) => c.name).join(', ')}`);
  });
});
