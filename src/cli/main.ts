/**
 * memagent: the app's memory loop from the command line, against any
 * OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama). The loop, the
 * chunker, the read plan and the evaluation harness are the app's own
 * modules; only storage differs: files instead of IndexedDB.
 *
 *   memagent read book.txt --question "..." --base-url http://127.0.0.1:8000/v1 --model NAME
 *   memagent eval --base-url http://127.0.0.1:8000/v1 --model NAME --tasks niah_single_1 --lengths 8k,32k
 */
import { COMMANDS, printCommandHelp, printHelp, versionText } from './commands';
import { UsageError } from './flags';

/** Runs one command; resolves to the exit code. */
function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const found = COMMANDS.find((c) => c.name === command);
  if (found) return found.run(rest, () => printCommandHelp(found));
  if (command === '--version' || command === '-v') return Promise.resolve((process.stdout.write(versionText()), 0));
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return Promise.resolve(printHelp());
  return Promise.reject(new UsageError(`Unknown command "${command}": use ${COMMANDS.map((c) => c.name).join(', ')}.`));
}

/** Exit codes: 0 done, 1 failed, 2 a command line that cannot be run, 130 stopped by Ctrl-C. */
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError) process.stderr.write(`${e.message}\nRun memagent --help for the options.\n`);
    else process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);
