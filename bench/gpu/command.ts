/** The benchmark's command line, the same from a checkout (main.ts) and from a bundle (bundle-entry.ts). */
import { type BenchEnvironment, describeRecord, runGpuBench } from './bench';
import { runPeerAfter } from './peer/bench-peer';
import { BENCH_HELP, type BenchOptions, BenchUsageError, parseBenchArgs } from './options';

export async function runBenchCommand(
  argv: string[],
  env: Pick<BenchEnvironment, 'load' | 'dawnAddon'> & { defaults: Pick<BenchOptions, 'library' | 'tokenizer' | 'text' | 'cacheDir' | 'out'> },
): Promise<number> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const options = parseBenchArgs(argv, env.defaults);
    if (options === 'help') {
      process.stdout.write(BENCH_HELP);
      return 0;
    }
    const record = await runGpuBench(options, { ...env, log });
    process.stdout.write(`${describeRecord(record)}\n  record            ${options.out}\n`);
    if (options.peer) process.stdout.write(`${(await runPeerAfter(record, { ...options, log })).text}\n`);
    return 0;
  } catch (e) {
    log(e instanceof Error ? e.message : String(e));
    if (e instanceof BenchUsageError) log('Run with --help for the options.');
    return e instanceof BenchUsageError ? 2 : 1;
  }
}
