import { spawn } from 'node:child_process';

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in its own process, from the repository root: the TypeScript
 * through tsx's loader (what `npx tsx` does, without npx's second of start-up),
 * or as installed, `npx memagent`.
 */
export function runCli(args: string[], options: { env?: Record<string, string>; installed?: boolean } = {}): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const [command, ...prefix] = options.installed ? ['npx', 'memagent'] : [process.execPath, '--import', 'tsx', 'src/cli/main.ts'];
    const child = spawn(command!, [...prefix, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
