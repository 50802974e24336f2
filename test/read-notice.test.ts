import { describe, expect, it } from 'vitest';
import { endNotice, LONG_READ_MS, progressTitle, shouldAskPermission, shouldNotify } from '../src/ui/read-notice';

describe("the tab's title", () => {
  it('shows the share of chunks read, and the plain title when nothing reads', () => {
    expect(progressTitle([])).toBe('memagent-web');
    expect(progressTitle([{ read: 37, total: 100 }])).toBe('37 % · memagent-web');
    expect(progressTitle([{ read: 2, total: 3 }])).toBe('66 % · memagent-web');
    expect(progressTitle([{ read: 0, total: 0 }])).toBe('0 % · memagent-web');
  });

  it('counts several reads as one, and never says 100 % while the answer is still to be written', () => {
    expect(
      progressTitle([
        { read: 10, total: 10 },
        { read: 0, total: 30 },
      ]),
    ).toBe('25 % · memagent-web');
    expect(progressTitle([{ read: 50, total: 50 }])).toBe('99 % · memagent-web');
    expect(progressTitle([{ read: 5, total: 4 }])).toBe('99 % · memagent-web');
  });
});

describe('asking to notify', () => {
  const base = { permission: 'default' as const, asked: false };

  it('asks for a read expected to take over a minute, or one that has run a minute', () => {
    expect(shouldAskPermission({ ...base, expectedMs: LONG_READ_MS + 1 })).toBe(true);
    expect(shouldAskPermission({ ...base, runningMs: LONG_READ_MS })).toBe(true);
  });

  it('does not ask for a short read, nor when the estimate is unknown and the read is young', () => {
    expect(shouldAskPermission({ ...base, expectedMs: LONG_READ_MS })).toBe(false);
    expect(shouldAskPermission({ ...base, expectedMs: null, runningMs: LONG_READ_MS - 1 })).toBe(false);
    expect(shouldAskPermission({ ...base })).toBe(false);
  });

  it('asks only once: never again after any answer, and never where the browser already decided or has no notifications', () => {
    const long = { expectedMs: 10 * LONG_READ_MS, runningMs: 10 * LONG_READ_MS };
    expect(shouldAskPermission({ ...base, ...long, asked: true })).toBe(false);
    for (const permission of ['granted', 'denied', 'unsupported'] as const) expect(shouldAskPermission({ permission, asked: false, ...long })).toBe(false);
  });
});

describe('notifying that a read ended', () => {
  const ended = { permission: 'granted' as const, hidden: true, tookMs: LONG_READ_MS + 1, status: 'done' as const };

  it('notifies a long read that finished or failed while the tab was hidden', () => {
    expect(shouldNotify(ended)).toBe(true);
    expect(shouldNotify({ ...ended, status: 'failed' })).toBe(true);
  });

  it('stays quiet for a visible tab, a read of a minute or less, a read the person stopped, or without permission', () => {
    expect(shouldNotify({ ...ended, hidden: false })).toBe(false);
    expect(shouldNotify({ ...ended, tookMs: LONG_READ_MS })).toBe(false);
    expect(shouldNotify({ ...ended, status: 'paused' })).toBe(false);
    expect(shouldNotify({ ...ended, status: 'cancelled' })).toBe(false);
    for (const permission of ['default', 'denied', 'unsupported'] as const) expect(shouldNotify({ ...ended, permission })).toBe(false);
  });

  it('says which book, the question and the answer, or why the read stopped', () => {
    const run = { question: 'Who is the creature?', documentName: 'frankenstein.txt', answer: 'A being made by Victor' };
    expect(endNotice({ ...run, status: 'done' })).toEqual({
      title: 'Read of frankenstein.txt finished',
      body: 'Who is the creature?\nAnswer: A being made by Victor',
    });
    expect(endNotice({ ...run, status: 'failed', error: 'The server went away.' })).toEqual({
      title: 'The read of frankenstein.txt stopped',
      body: 'The server went away. Open the run to resume it.',
    });
  });
});
