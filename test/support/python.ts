import { spawnSync } from 'node:child_process';

/** Whether a Python 3 interpreter is on this machine: tests that compare with Python itself run only where it is. */
export const hasPython = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0;

/**
 * Runs a Python 3 script with `input` as JSON on its stdin and returns what it
 * prints as JSON: the reference behaviour the app's readings are compared with.
 */
export function runPython<T>(script: string, input: unknown): T {
  const result = spawnSync('python3', ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`python3 failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}
