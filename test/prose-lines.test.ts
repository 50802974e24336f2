import { describe, expect, it } from 'vitest';
import { joinHardWraps } from '../src/core/prose-lines';
import { corpusText } from './helpers';

describe('prose shown as paragraphs', () => {
  it("joins a book's hard-wrapped lines, keeps its blank lines, and keeps every offset", () => {
    const text = 'With his\npermission my mother\nconsented.\n\nChapter 2\n  \nWe were brought up together.';
    const shown = joinHardWraps(text);
    expect(shown).toBe('With his permission my mother consented.\n\nChapter 2\n  \nWe were brought up together.');
    expect(shown).toHaveLength(text.length);
  });

  it("leaves each of Frankenstein's words where it was", () => {
    const book = corpusText('frankenstein.txt');
    const shown = joinHardWraps(book);
    expect(shown).toHaveLength(book.length);
    expect(shown.replace(/\s/g, '')).toBe(book.replace(/\s/g, ''));
    expect(shown.split('\n\n').length).toBe(book.split('\n\n').length);
    expect(shown).not.toMatch(/\S[^\S\n]*\n[^\S\n]*\S/);
  });
});
