import { describe, expect, it } from 'vitest';
import { stillPending } from '../src/ui/job-pending';

describe('a pressed Pause or Cancel', () => {
  it('stays pending while storage still holds the status it was pressed in', () => {
    expect(stillPending({ action: 'pause', from: 'running' }, 'running')).toEqual({ action: 'pause', from: 'running' });
    expect(stillPending({ action: 'cancel', from: 'paused' }, 'paused')).toEqual({ action: 'cancel', from: 'paused' });
  });

  it('is answered once the stored status moves, whatever it moved to', () => {
    expect(stillPending({ action: 'pause', from: 'running' }, 'paused')).toBeNull();
    expect(stillPending({ action: 'pause', from: 'running' }, 'done')).toBeNull();
    expect(stillPending({ action: 'cancel', from: 'paused' }, 'cancelled')).toBeNull();
    expect(stillPending({ action: 'cancel', from: 'paused' }, 'running')).toBeNull();
  });

  it('is nothing when nothing was pressed', () => {
    expect(stillPending(null, 'running')).toBeNull();
  });
});
