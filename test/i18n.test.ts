import { afterEach, describe, expect, it } from 'vitest';
import { en } from '../src/ui/i18n/en';
import { zhCN } from '../src/ui/i18n/zh-CN';
import { i18n, pickLanguage } from '../src/ui/i18n';
import { formatBytes, formatDate, formatDuration, formatRemaining, formatSpeed, formatTokens } from '../src/ui/format';

/** Every key path of a resource tree, "run.status.done" style. */
function keys(tree: object, prefix = ''): string[] {
  return Object.entries(tree).flatMap(([k, v]) => (typeof v === 'string' ? [`${prefix}${k}`] : keys(v as object, `${prefix}${k}.`)));
}

/** The {{placeholders}} a message fills in. */
function placeholders(message: string): string[] {
  return [...message.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!).sort();
}

describe('the zh-CN resources', () => {
  it('have exactly the keys of the English ones', () => {
    expect(keys(zhCN).sort()).toEqual(keys(en).sort());
  });

  it('fill in the same placeholders as the English message of each key, and translate every message that has words', () => {
    const lookup = (tree: object, path: string) => path.split('.').reduce<unknown>((node, k) => (node as Record<string, unknown>)[k], tree) as string;
    for (const key of keys(en)) {
      expect(placeholders(lookup(zhCN, key)), key).toEqual(placeholders(lookup(en, key)));
      expect(lookup(zhCN, key).trim(), key).not.toBe('');
    }
  });
});

describe('the language chosen from the browser', () => {
  it('is Simplified Chinese for Chinese in mainland China, Singapore or Simplified script, English otherwise', () => {
    expect(pickLanguage(['zh-CN', 'en'])).toBe('zh-CN');
    expect(pickLanguage(['zh'])).toBe('zh-CN');
    expect(pickLanguage(['zh-Hans-CN'])).toBe('zh-CN');
    expect(pickLanguage(['fr-FR', 'zh-SG'])).toBe('zh-CN');
    expect(pickLanguage(['en-GB', 'zh-CN'])).toBe('en');
    expect(pickLanguage(['zh-TW', 'fr'])).toBe('en');
    expect(pickLanguage(['de-DE'])).toBe('en');
    expect(pickLanguage([])).toBe('en');
  });
});

describe('numbers, sizes and durations', () => {
  afterEach(() => i18n.changeLanguage('en'));

  it('read in English as before', async () => {
    await i18n.changeLanguage('en');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(72 * 1024)).toBe('72 KB');
    expect(formatBytes(256 * 1024 * 1024)).toBe('256.0 MB');
    expect(formatTokens({ tokens: 99712, tokensEstimated: false })).toBe('99,712 tokens');
    expect(formatTokens({ tokens: 3_512_345, tokensEstimated: true })).toBe('about 3,512,000 tokens (counting…)');
    expect(formatSpeed(1850.4)).toBe('1,850');
    expect(formatSpeed(1.04)).toBe('1.0');
    expect(formatDuration(500)).toBe('less than a second');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatRemaining(200_000)).toBe('about 3 min 20 s left');
    expect(formatDuration(3 * 3600_000 + 5 * 60_000)).toBe('3 h 5 min');
  });

  it('read in Simplified Chinese through Intl and the zh-CN words', async () => {
    await i18n.changeLanguage('zh-CN');
    expect(formatTokens({ tokens: 99712, tokensEstimated: false })).toBe('99,712 个词元');
    expect(formatRemaining(200_000)).toBe('约剩 3 分 20 秒');
    expect(formatDuration(3 * 3600_000 + 5 * 60_000)).toBe('3 小时 5 分');
    expect(formatBytes(256 * 1024 * 1024)).toBe('256.0 MB');
    const t = Date.UTC(2026, 11, 1, 16, 30);
    expect(formatDate(t)).toBe(new Intl.DateTimeFormat('zh-CN', { dateStyle: 'medium', timeStyle: 'short' }).format(t));
    expect(formatDate(t)).toMatch(/2026年12月/);
  });
});
