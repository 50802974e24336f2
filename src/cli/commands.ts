/**
 * The command line's commands, in one table: `memagent --help` lists them and
 * main.ts dispatches through it, so a new command is one line here. The top of
 * the command line: the commands below know the help only as the function
 * they are handed.
 */
import { readFileSync } from 'node:fs';
import { evalCommand } from './eval';
import { COMMAND_HELP, HELP } from './help';
import { modelsCommand } from './models';
import { readCommand } from './read';
import { readInfmemCommand, readMethodOf } from './read-infmem';

export interface Command {
  name: string;
  /** One line for `memagent --help`. */
  summary: string;
  /** Its own usage and options, for `memagent <name> --help`; without them, its --help prints the whole help. */
  help?: string;
  /** Runs the command; `help` prints its help, for its --help. */
  run(argv: string[], help: () => number): Promise<number>;
}

export const COMMANDS: readonly Command[] = [
  {
    name: 'read',
    summary: 'read a book through the memory loop and answer a question',
    help: COMMAND_HELP.read,
    // --method infmem reads the InfMem way (read-infmem.ts); MemAgent's read never sees the flag.
    run: async (argv, help) => {
      const { method, rest } = readMethodOf(argv);
      return method === 'infmem' ? readInfmemCommand(argv, help) : readCommand(rest, help);
    },
  },
  { name: 'eval', summary: 'accuracy against document length: generated tasks or RULER-HotpotQA files', help: COMMAND_HELP.eval, run: evalCommand },
  { name: 'models', summary: 'list, download or delete the models kept for --engine webllm', run: modelsCommand },
];

/** The package's version, read from package.json so it is never written twice. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The flags that stand in for a command, listed with the commands. */
const FLAG_COMMANDS: readonly (readonly [string, string])[] = [
  ['--help', 'every command and option'],
  ['--version', 'the version of memagent and its commands'],
];

/** The lines of `memagent --help` and `memagent --version` that name every command. */
export function commandList(): string {
  const rows = [...COMMANDS.map((c) => [c.name, c.summary] as const), ...FLAG_COMMANDS];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return ['Commands:', ...rows.map(([name, summary]) => `  ${name.padEnd(width)}${summary}`)].join('\n');
}

/** What `memagent --version` prints: the version, then what this version can do. */
export function versionText(): string {
  return `memagent ${version()}\n${commandList()}\n`;
}

/** Prints `memagent --help`: the commands, then every command's usage and options. */
export function printHelp(): number {
  process.stdout.write(HELP.replace('\nUsage:', `\n${commandList()}\n\nUsage:`));
  return 0;
}

/** Prints `memagent <command> --help`: that command's own usage and options, else the whole help. */
export function printCommandHelp(command: Command): number {
  if (!command.help) return printHelp();
  process.stdout.write(command.help);
  return 0;
}
