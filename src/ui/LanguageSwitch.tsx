import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { LANGUAGES, type Language, setLanguage } from './i18n';

/** The interface language, in the header; each language is named in itself. */
export function LanguageSwitch() {
  const { t, i18n } = useTranslation();
  const id = useId();
  return (
    <div className="language">
      <label htmlFor={id}>{t('shell.language')}</label>
      <select id={id} value={i18n.language} onChange={(e) => setLanguage(e.target.value as Language)}>
        {LANGUAGES.map((l) => (
          <option key={l.code} value={l.code} lang={l.code}>
            {l.name}
          </option>
        ))}
      </select>
    </div>
  );
}
