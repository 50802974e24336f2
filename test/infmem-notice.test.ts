/**
 * The notes an InfMem run's header shows where its requests were not the
 * official code's: control strings made inert, a tie at a search's cut, a
 * server's chat endpoint; in both languages, and none where nothing departed.
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { i18n } from '../src/ui/i18n';
import { InfmemModelNotice } from '../src/ui/InfmemModelNotice';
import type { RunRecord } from '../src/storage/db';

const MODEL: NonNullable<RunRecord['infmemModel']> = { family: 'qwen3', files: { infmem: 'imported infmem.py', fncall: 'imported qwen_fncall_prompt.py' } };
const notes = (run: Pick<RunRecord, 'infmemModel' | 'infmem'>) =>
  [...renderToStaticMarkup(createElement(InfmemModelNotice, { run })).matchAll(/<p role="note"[^>]*>(.*?)<\/p>/g)].map((m) => m[1]!);

describe("an InfMem run's notes", () => {
  it('say nothing where the requests were the official ones', async () => {
    await i18n.changeLanguage('en');
    expect(notes({ infmemModel: MODEL, infmem: { votes: 0, history: [] } })).toEqual([]);
  });

  it('say that control strings were made inert, and how many searches cut their four inside a tie, the first before which chunk', async () => {
    await i18n.changeLanguage('en');
    const said = notes({ infmemModel: { ...MODEL, inert: true }, infmem: { votes: 0, history: [], ties: [2, 5] } });
    expect(said).toHaveLength(2);
    expect(said[0]).toMatch(/^Chat-template control strings .* were made inert before they were sent/);
    expect(said[1]).toMatch(/^2 searches \(the first before chunk 3\) cut their four passages inside a tie of equal scores/);
    // The extractive engine records no model, but its searches are InfMem's: a tie is said all the same.
    expect(notes({ infmem: { votes: 0, history: [], ties: [0] } })).toEqual([
      expect.stringMatching(/^1 search \(before chunk 1\) cut its four passages inside a tie/),
    ]);
    await i18n.changeLanguage('zh-CN');
    expect(notes({ infmemModel: { ...MODEL, inert: true }, infmem: { votes: 0, history: [], ties: [0] } })).toEqual([
      expect.stringContaining('消除作用'),
      expect.stringContaining('第 1 块之前'),
    ]);
    await i18n.changeLanguage('en');
  });
});
