/**
 * The command line's commands, in one table: `memagent --help` lists them and
 * main.ts dispatches through it, so a new command is one line here.
 */
import { readFileSync } from 'node:fs';
import { evalCommand } from './eval';
import { modelsCommand } from './models';
import { readCommand } from './read';

export interface Command {
  name: string;
  /** One line for `memagent --help`. */
  summary: string;
  run(argv: string[]): Promise<number>;
}

export const COMMANDS: readonly Command[] = [
  { name: 'read', summary: 'read a book through the memory loop and answer a question', run: readCommand },
  { name: 'eval', summary: 'accuracy against document length: generated tasks or RULER-HotpotQA files', run: evalCommand },
  { name: 'models', summary: 'list, download or delete the models kept for --engine webllm', run: modelsCommand },
];

/** The package's version, read from package.json so it is never written twice. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The lines of `memagent --help` that name every command. */
export function commandList(): string {
  const width = Math.max('--version'.length, ...COMMANDS.map((c) => c.name.length)) + 2;
  return ['Commands:', ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`), `  ${'--version'.padEnd(width)}the version of memagent`].join('\n');
}
