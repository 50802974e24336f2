import { describe, expect, it } from 'vitest';
import { readStatus } from '../src/ui/read-status';

describe('the status of a read of several questions', () => {
  it('is reading while any question reads, even beside paused and finished ones', () => {
    expect(readStatus(['done', 'paused', 'running'])).toBe('running');
  });

  it('is paused, failed or cancelled while a question is, so that Resume goes on with it', () => {
    expect(readStatus(['done', 'paused'])).toBe('paused');
    expect(readStatus(['cancelled', 'failed', 'done'])).toBe('failed');
    expect(readStatus(['done', 'cancelled'])).toBe('cancelled');
  });

  it('is done once every question is', () => {
    expect(readStatus(['done', 'done', 'done'])).toBe('done');
  });
});
