import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `npm run eval -- …`: an alias of `memagent eval`. */
function evalCommand(args: string[]) {
  return run('npm', ['run', '--silent', 'eval', '--', ...args], { cwd: ROOT, timeout: 60_000 });
}

describe('npm run eval (memagent eval)', () => {
  it('prints the accuracy table and writes the JSON report', async () => {
    const json = join(mkdtempSync(join(tmpdir(), 'memagent-eval-')), 'report.json');
    const { stdout } = await evalCommand(['--engine', 'extractive', '--tasks', 'niah_single_1,vt', '--lengths', '8k', '--samples', '1', '--json', json]);
    expect(stdout).toMatch(/^accuracy %\s+8K$/m);
    expect(stdout).toMatch(/^niah_single_1\s+100\.0$/m);
    expect(stdout).toMatch(/^vt\s+20\.0$/m);
    expect(stdout).toMatch(/^mean\s+60\.0$/m);
    expect(stdout).toMatch(/^task\s+length\s+samples\s+accuracy %\s+ms\/chunk\s+tokens\/s$/m);
    expect(stdout).toMatch(/^niah_single_1\s+8K\s+1\/1\s+100\.0\s+[\d.,]+\s+[\d,]+$/m);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    expect(report).toMatchObject({ engine: 'extractive', spec: { tasks: ['niah_single_1', 'vt'], lengths: [8192], samples: 1 } });
    expect(report.samples).toHaveLength(2);
  });

  it('says what is wrong with a bad flag', async () => {
    const failure = await evalCommand(['--tasks', 'niah_single_9']).catch((e: { code: number; stderr: string }) => e);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(/Unknown task niah_single_9/);
  });
});
