// Which emitted chunks import a module worker's entry chunk. WebKit evaluates a module worker's main script
// a second time when a chunk it loads imports from it, so such an import starts the worker's services twice.
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { init, parse } from 'es-module-lexer';

async function scripts(dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await scripts(path)));
    else if (/\.m?js$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** The file names that `new Worker(new URL('…', import.meta.url), { type: 'module' })` starts, anywhere in the build. */
function workerEntries(code) {
  const entries = [];
  for (const m of code.matchAll(/new Worker\(\s*new URL\(\s*(["'`])([^"'`]+)\1/g)) entries.push(basename(m[2]));
  return entries;
}

/**
 * Reads every script under `dist` and returns the worker entries found and each import of one of them
 * (static, dynamic or re-export) by another chunk, as `{ chunk, imports }` with paths relative to `dist`.
 */
export async function findEntryImports(dist) {
  await init;
  const files = await scripts(dist);
  const sources = new Map(await Promise.all(files.map(async (f) => [f, await readFile(f, 'utf8')])));
  const entries = new Set([...sources.values()].flatMap(workerEntries));
  const offences = [];
  for (const [file, code] of sources) {
    const [imports] = parse(code, file);
    for (const i of imports) {
      const specifier = i.n ?? code.slice(i.s, i.e);
      const target = basename(specifier.split(/[?#]/)[0]);
      if (entries.has(target) && basename(file) !== target) offences.push({ chunk: relative(dist, file), imports: target });
    }
  }
  return { entries: [...entries].sort(), offences };
}
