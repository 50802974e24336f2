import { afterEach, describe, expect, it, vi } from 'vitest';
import { Watchers } from '../src/jobs/watchers';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('model watchers', () => {
  it('two watchers made in the same millisecond, after one was removed, get distinct handles and stop separately', () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
    const watchers = new Watchers();
    const stopped: string[] = [];
    const first = watchers.add(() => stopped.push('first'));
    const second = watchers.add(() => stopped.push('second'));
    watchers.remove(first);
    const third = watchers.add(() => stopped.push('third'));
    expect(new Set([second, third]).size).toBe(2);
    watchers.remove(third);
    expect(stopped).toEqual(['first', 'third']);
    expect(watchers.size).toBe(1);
    watchers.remove(third); // already gone: nothing happens
    expect(stopped).toEqual(['first', 'third']);
  });
});
