/**
 * A failure thrown away must say why: every `.catch(() => undefined)` (or an
 * empty one) in src/ and workers/ has a comment on its line or the line above
 * that gives the reason losing it is fine. Failures that matter are reported
 * instead (src/core/failures.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { tellQuietly, warnFailure } from '../src/core/failures';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const SILENT = /\.catch\(\s*(?:\(\s*(?:_\w*)?\s*\)|_\w*)\s*=>\s*(?:undefined|void 0|\{\s*\})\s*\)/;

function isComment(line: string): boolean {
  const t = line.trim();
  return t.startsWith('//') || t.startsWith('/*') || t.startsWith('*') || t.endsWith('*/');
}

/** The 1-based lines of `text` that throw a failure away with no reason beside them. */
function unjustified(text: string): number[] {
  const lines = text.split('\n');
  const found: number[] = [];
  lines.forEach((line, i) => {
    const m = SILENT.exec(line);
    if (!m) return;
    if (/\/\/|\/\*/.test(line.slice(m.index))) return;
    let above = i - 1;
    while (above >= 0 && lines[above]!.trim() === '') above--;
    if (above >= 0 && isComment(lines[above]!)) return;
    found.push(i + 1);
  });
  return found;
}

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('silent catches', () => {
  it('finds a catch that throws a failure away with no reason', () => {
    expect(unjustified('const a = 1;\nawait tx.done.catch(() => undefined);\n')).toEqual([2]);
    expect(unjustified('void work().catch(() => {});')).toEqual([1]);
    expect(unjustified('void work().catch((_e) => undefined);')).toEqual([1]);
    expect(unjustified('  .then(f)\n  .catch(() => void 0)\n')).toEqual([2]);
  });

  it('accepts one with its reason on the same line or the line above', () => {
    expect(unjustified('await tx.done.catch(() => undefined); // the abort is the point\n')).toEqual([]);
    expect(unjustified('// Best effort: the tab may be closing.\nawait tx.done.catch(() => undefined);\n')).toEqual([]);
    expect(unjustified('/* the reason */\n\nwork.catch(() => undefined);')).toEqual([]);
    expect(unjustified('f(a.catch(() => undefined) /* the reason */, b);')).toEqual([]);
    expect(unjustified('work.catch((e) => console.warn(e));')).toEqual([]);
  });

  it('src/ and workers/ give a reason for every failure they throw away', () => {
    const wrong = [...files('src'), ...files('workers')].flatMap((f) => unjustified(readFileSync(join(ROOT, f), 'utf8')).map((line) => `${f}:${line}`));
    expect(wrong).toEqual([]);
  });
});

describe('failures nobody waits on', () => {
  it('tells a listener, and a listener that rejects (a tab gone) loses only its own news', () => {
    const heard: number[] = [];
    const tell = tellQuietly((n: number) => {
      heard.push(n);
      return Promise.reject(new Error('the tab has closed'));
    });
    tell(1);
    tell(2);
    tellQuietly<[number]>(undefined)(3);
    expect(heard).toEqual([1, 2]);
  });

  it('logs a background failure with what failed', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = new Error('database closed');
    warnFailure('Resuming run r1')(error);
    expect(warn).toHaveBeenCalledWith('Resuming run r1 failed:', error);
    warn.mockRestore();
  });
});
