/**
 * The shape of the house, read from the imports: which room may import which
 * (docs/architecture.md explains each rule). A new arrow that runs back up
 * fails here with the file that drew it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What each room may import (besides itself). Storage's readers reach the UI only through ui/data. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  engines: ['core'],
  ingest: ['core'],
  eval: ['core'],
  storage: ['core', 'eval'],
  'agent/events': ['storage'],
  'agent/protocol': ['agent/events', 'core', 'engines', 'eval', 'ingest', 'storage'],
  jobs: ['agent/events', 'agent/protocol', 'core', 'engines', 'storage'],
  library: ['agent/events', 'agent/protocol', 'core', 'ingest', 'jobs', 'storage'],
  runs: ['agent/events', 'agent/protocol', 'core', 'engines', 'eval', 'ingest', 'jobs', 'library', 'storage'],
  cli: ['core', 'engines', 'eval', 'ingest'],
  ui: ['agent/events', 'agent/protocol', 'core', 'engines', 'eval', 'ui/data'],
  'ui/data': ['agent/events', 'agent/protocol', 'core', 'storage', 'ui'],
  main: ['ui'],
  workers: ['agent/events', 'agent/protocol', 'core', 'engines', 'eval', 'ingest', 'jobs', 'library', 'runs', 'storage'],
};

/** The model runtimes: only the worker side loads them. */
const RUNTIMES = ['@mlc-ai/web-llm', '@wllama/wllama'];

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

function room(file: string): string {
  const [top, first, second] = file.split('/');
  if (top === 'workers') return 'workers';
  if (first === 'main.tsx') return 'main';
  if (first === 'agent') return `agent/${second!.replace(/\.ts$/, '')}`;
  if (first === 'ui' && second === 'data') return 'ui/data';
  return first!;
}

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Static imports and re-exports of a file (dynamic import() loads later, on purpose, and is left out). */
function importsOf(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const found: Import[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm)) {
    const spec = m[3]!;
    const typeOnly = !!m[2];
    if (!spec.startsWith('.')) {
      found.push({ from: file, to: spec, typeOnly });
      continue;
    }
    const base = resolve(ROOT, dirname(file), spec);
    const target = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((p) => existsSync(p) && statSync(p).isFile());
    if (target) found.push({ from: file, to: relative(ROOT, target), typeOnly });
  }
  return found;
}

const ALL = [...files('src'), ...files('workers')];
const IMPORTS = new Map(ALL.map((f) => [f, importsOf(f)]));

describe('the house', () => {
  it('has no arrow that runs back up: each room imports only the rooms below it', () => {
    const wrong: string[] = [];
    for (const [file, imports] of IMPORTS) {
      const from = room(file);
      for (const i of imports) {
        if (!i.to.startsWith('src/') && !i.to.startsWith('workers/')) continue;
        const to = room(i.to);
        if (to !== from && !MAY_IMPORT[from]?.includes(to)) wrong.push(`${file} (${from}) imports ${i.to} (${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the protocol owns the requests it carries and holds only types and names, importing types alone', () => {
    for (const file of ['src/agent/protocol.ts', 'src/agent/events.ts']) {
      const values = IMPORTS.get(file)!.filter((i) => !i.typeOnly && !i.to.startsWith('src/agent/'));
      expect(values, file).toEqual([]);
    }
    const protocol = readFileSync(join(ROOT, 'src/agent/protocol.ts'), 'utf8');
    for (const name of ['RunRequest', 'EvaluationRequest', 'IngestRequest', 'PromptFileStatus'])
      expect(protocol).toMatch(new RegExp(`export interface ${name}\\b`));
  });

  it('engines keep what they measure on a shelf the worker hands them, and never import storage', () => {
    const engineFiles = ALL.filter((f) => room(f) === 'engines');
    expect(engineFiles.length).toBeGreaterThan(10);
    const intoStorage = engineFiles.flatMap((f) => IMPORTS.get(f)!.filter((i) => room(i.to) === 'storage' || i.to.includes('idb')));
    expect(intoStorage).toEqual([]);
  });

  it('the page never loads a model runtime through its static imports', () => {
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const i of IMPORTS.get(file) ?? []) if (!i.typeOnly && IMPORTS.has(i.to)) visit(i.to);
    };
    visit('src/main.tsx');
    const runtimes = [...reached].flatMap((f) =>
      IMPORTS.get(f)!
        .filter((i) => !i.typeOnly && RUNTIMES.some((r) => i.to === r || i.to.startsWith(`${r}/`)))
        .map((i) => `${f} imports ${i.to}`),
    );
    expect(reached.size).toBeGreaterThan(20);
    expect(runtimes).toEqual([]);
  });

  it('has no import circle: every folder reads top-down, from the file that uses to the file that is used', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') return void circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      state.set(file, 'open');
      for (const i of IMPORTS.get(file) ?? []) if (IMPORTS.has(i.to)) visit(i.to, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of ALL) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('keeps every file of src/ to 400 lines or fewer, data tables (the translations) apart', () => {
    const long = ALL.filter((f) => !f.startsWith('src/ui/i18n/'))
      .map((f) => ({ f, lines: readFileSync(join(ROOT, f), 'utf8').trimEnd().split('\n').length }))
      .filter(({ lines }) => lines > 400)
      .map(({ f, lines }) => `${f}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it('has no function that takes more than four arguments: more go in one object of named fields', () => {
    const many = ALL.flatMap((f) => {
      const source = ts.createSourceFile(f, readFileSync(join(ROOT, f), 'utf8'), ts.ScriptTarget.Latest, true);
      const found: string[] = [];
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && node.parameters.length > 4) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          found.push(`${f}:${line + 1} takes ${node.parameters.length}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      return found;
    });
    expect(many).toEqual([]);
  });

  it('keeps functions to 60 lines, JSX apart: a new one over it fails, the longer ones written before may only shrink, and an allowance goes with its function', () => {
    const long = ALL.filter((f) => f.endsWith('.ts')).flatMap((f) => {
      const source = ts.createSourceFile(f, readFileSync(join(ROOT, f), 'utf8'), ts.ScriptTarget.Latest, true);
      const found: { at: string; lines: number }[] = [];
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const lines = source.getLineAndCharacterOfPosition(node.end).line - first + 1;
          const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
          if (lines > FUNCTION_LINES) found.push({ at: `${f} ${name}`, lines });
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      return found;
    });
    const over = long.filter(({ at, lines }) => lines > (LONG_BEFORE[at] ?? FUNCTION_LINES)).map(({ at, lines }) => `${at}: ${lines} lines`);
    expect(over).toEqual([]);
    // An allowance outlives its function when it is split or removed: it goes too, so the list only shrinks.
    const stale = Object.keys(LONG_BEFORE).filter((at) => !long.some((l) => l.at === at));
    expect(stale).toEqual([]);
  });
});

/** The most lines a function of src/ or workers/ takes (files of JSX apart). */
const FUNCTION_LINES = 60;

/** Functions longer than that from before the rule, at the length they had then: each may shrink, none may grow. */
const LONG_BEFORE: Readonly<Record<string, number>> = {
  'src/runs/read.ts read': 160,
  'src/engines/webllm/models/model-fetch.ts fetchFile': 165,
  'src/library/stream-import.ts streamTextFile': 126,
  'src/engines/webllm/models/model-download.ts downloadModel': 108,
  'src/library/library.ts ingestOwned': 96,
  'src/ingest/epub.ts readEpub': 85,
  'src/cli/eval.ts evalCommand': 84,
  'src/runs/plan.ts planRuns': 84,
  'src/storage/migrations.ts upgrade': 83,
  'src/engines/wllama/engine.ts generateNow': 80,
  'src/ingest/html.ts appendHtml': 80,
  'src/core/python-strings.ts tokenize': 73,
  'src/ingest/docx.ts readDocx': 70,
  'src/ui/useRun.ts useRun': 69,
  'src/ingest/pdf.ts readPdf': 65,
  'src/ingest/ingest.ts ingestBytes': 62,
  'src/cli/prompts.ts resolveCliPrompts': 61,
};
