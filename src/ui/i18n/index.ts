import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en';
import { zhCN } from './zh-CN';

/** The languages the interface speaks; book text, memories and answers are shown as they are. */
export const LANGUAGES = [
  { code: 'en', name: 'English' },
  { code: 'zh-CN', name: '简体中文' },
] as const;
export type Language = (typeof LANGUAGES)[number]['code'];

const STORAGE_KEY = 'memagent-language';

/** The first of the browser's languages the app speaks: any Chinese but Traditional gets Simplified Chinese, the rest English. */
export function pickLanguage(preferred: readonly string[]): Language {
  for (const tag of preferred) {
    const lower = tag.toLowerCase();
    if (lower.startsWith('en')) return 'en';
    if (lower === 'zh' || lower.startsWith('zh-cn') || lower.startsWith('zh-hans') || lower.startsWith('zh-sg')) return 'zh-CN';
  }
  return 'en';
}

function isLanguage(value: unknown): value is Language {
  return LANGUAGES.some((l) => l.code === value);
}

function savedLanguage(): Language | null {
  try {
    const saved = globalThis.localStorage?.getItem(STORAGE_KEY);
    return isLanguage(saved) ? saved : null;
  } catch {
    return null; // storage blocked: the browser's language each visit
  }
}

function initialLanguage(): Language {
  const nav = globalThis.navigator as Navigator | undefined;
  return savedLanguage() ?? pickLanguage(nav?.languages?.length ? nav.languages : nav?.language ? [nav.language] : []);
}

function markDocument(language: string): void {
  if (typeof document !== 'undefined') document.documentElement.lang = language;
}

void i18next.use(initReactI18next).init({
  resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
  lng: initialLanguage(),
  fallbackLng: 'en',
  // React escapes what it renders; escaping here would show entities in book titles.
  interpolation: { escapeValue: false },
  returnNull: false,
  initAsync: false,
});
markDocument(i18next.language);
i18next.on('languageChanged', markDocument);

/** Switches the interface and remembers the choice for the next visit. */
export function setLanguage(language: Language): void {
  try {
    globalThis.localStorage?.setItem(STORAGE_KEY, language);
  } catch {
    // not kept, but switched for this visit
  }
  void i18next.changeLanguage(language);
}

/** The language the interface speaks now, as a BCP 47 tag for Intl. */
export function currentLanguage(): Language {
  return isLanguage(i18next.language) ? i18next.language : 'en';
}

export const i18n = i18next;

/** An engine's name or description in the interface's language, or as the engine gives it when there is no translation. */
export function engineText(id: string, field: 'label' | 'description', given: string): string {
  const key = `engines.${id}.${field}`;
  return i18next.exists(key) ? (i18next.t as (k: string) => string)(key) : given;
}
