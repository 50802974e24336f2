import { describe, expect, it } from 'vitest';
import { sentences } from '../src/ui/sentences';

describe('sentences said one after another', () => {
  it('are spaced as English spaces them', () => {
    expect(sentences('About 12 chunks.', 'No time to expect.')).toBe('About 12 chunks. No time to expect.');
  });

  it('take no space after a Chinese full stop, question mark or closing bracket', () => {
    expect(sentences('约 12 块。', '无法预计时间。')).toBe('约 12 块。无法预计时间。');
    expect(sentences('删除此运行？', '书仍保留。')).toBe('删除此运行？书仍保留。');
    expect(sentences('（略读）', '下一句')).toBe('（略读）下一句');
  });

  it('leave out empty parts', () => {
    expect(sentences('', 'One.', '')).toBe('One.');
  });
});
