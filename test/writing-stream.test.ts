import { afterEach, describe, expect, it, vi } from 'vitest';
import { WritingStream } from '../src/runs/writing-stream';

afterEach(() => vi.useRealTimers());

describe('the memory being written, as it streams', () => {
  it('goes out at once when nothing went out for 100 ms, then at most every 100 ms', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    vi.advanceTimersByTime(1000);
    const sent: string[] = [];
    const stream = new WritingStream((text) => sent.push(text));
    stream.add('Victor ');
    expect(sent).toEqual(['Victor ']); // in the same call: no step is too quick to show
    stream.add('left ');
    stream.add('Geneva.');
    expect(sent).toEqual(['Victor ']);
    vi.advanceTimersByTime(100);
    expect(sent).toEqual(['Victor ', 'Victor left Geneva.']);
  });

  it('sends nothing more of a step once its signal stops it, queued text included', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    vi.advanceTimersByTime(1000);
    const sent: string[] = [];
    const stop = new AbortController();
    const stream = new WritingStream((text) => sent.push(text), stop.signal);
    stream.add('Victor ');
    stream.add('left ');
    stop.abort();
    vi.advanceTimersByTime(1000);
    stream.add('Geneva.');
    vi.advanceTimersByTime(1000);
    expect(sent).toEqual(['Victor ']);
  });
});
