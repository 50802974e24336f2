import { type ChildProcess, spawn } from 'node:child_process';

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A CLI process running: its output so far, a wait for some of it, and its outcome. */
export interface RunningCli {
  child: ChildProcess;
  stderr(): string;
  /** Resolves once stderr holds a match of `pattern` (the output itself is the event, not a delay). */
  waitForStderr(pattern: RegExp): Promise<RegExpMatchArray>;
  outcome: Promise<CliOutcome>;
  /** Ctrl-C as a terminal sends it: SIGINT to the whole process group (npx and the node it starts alike). */
  interrupt(): void;
}

/**
 * Starts the CLI in its own process group (unless `group` is false), from the repository root: the
 * TypeScript through tsx's loader (what `npx tsx` does, without npx's second of
 * start-up), through `bin/memagent.js` (what `npx memagent` runs), or as
 * installed, `npx memagent`.
 */
export function startCli(args: string[], options: { env?: Record<string, string>; via?: 'source' | 'bin' | 'npx'; group?: boolean } = {}): RunningCli {
  const via = options.via ?? 'source';
  const [command, ...prefix] =
    via === 'npx' ? ['npx', 'memagent'] : via === 'bin' ? [process.execPath, 'bin/memagent.js'] : [process.execPath, '--import', 'tsx', 'src/cli/main.ts'];
  const child = spawn(command!, [...prefix, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
    detached: options.group !== false,
  });
  let stdout = '';
  let stderr = '';
  const waits: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const w of [...waits]) {
      const m = stderr.match(w.pattern);
      if (!m) continue;
      waits.splice(waits.indexOf(w), 1);
      w.resolve(m);
    }
  });
  const outcome = new Promise<CliOutcome>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return {
    child,
    stderr: () => stderr,
    outcome,
    waitForStderr: (pattern) =>
      new Promise((resolve, reject) => {
        const m = stderr.match(pattern);
        if (m) return resolve(m);
        waits.push({ pattern, resolve });
        // A process that ends without printing it would leave the wait hanging: fail with what it printed.
        void outcome.then((o) => reject(new Error(`memagent ended (exit ${o.code}) without printing ${pattern}:\n${o.stderr}`)));
      }),
    interrupt: () => process.kill(-child.pid!, 'SIGINT'),
  };
}

/** Runs the CLI to its end (see startCli). */
export function runCli(args: string[], options: { env?: Record<string, string>; installed?: boolean } = {}): Promise<CliOutcome> {
  return startCli(args, { env: options.env, via: options.installed ? 'npx' : 'source', group: false }).outcome;
}
