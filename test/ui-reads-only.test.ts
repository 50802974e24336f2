import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoreView } from '../src/ui/data';

const root = resolve(import.meta.dirname, '..');
const ui = join(root, 'src/ui');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Every module a file names: static imports, re-exports and dynamic imports. */
function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

// A writer of the Store in the page's view would fail the type check here.
type Writer = `${'store' | 'put' | 'set' | 'create' | 'update' | 'delete' | 'commit' | 'import' | 'add'}${string}`;
const viewHasNoWriter: [Extract<keyof StoreView, Writer>] extends [never] ? true : false = true;

describe('the page reads storage only through its read-only view', () => {
  it('no file of the UI but src/ui/data imports a storage module', () => {
    const offenders = sources(ui)
      .filter((file) => !file.startsWith(join(ui, 'data') + '/'))
      .flatMap((file) =>
        specifiers(readFileSync(file, 'utf8'))
          .filter((s) => s.startsWith('.') && resolve(dirname(file), s).startsWith(join(root, 'src/storage')))
          .map((s) => `${relative(root, file)} imports ${s}`),
      );
    expect(offenders).toEqual([]);
  });

  it('finds an import of storage where there is one', () => {
    // The scan itself is checked, so that an empty result means something.
    expect(specifiers("import { Store } from '../storage/db';\nconst m = await import('../../storage/export');")).toEqual([
      '../storage/db',
      '../../storage/export',
    ]);
    expect(viewHasNoWriter).toBe(true);
  });
});
