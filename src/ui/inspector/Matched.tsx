import { type ReactNode, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { findAll } from '../../core/find-text';

/** A memory with each place that matches the search marked, so that a match is seen where it is, not only counted. */
export function Matched({ text, query }: { text: string; query: string }) {
  const { t } = useTranslation();
  const spans = useMemo(() => findAll(text, query), [text, query]);
  if (!spans.length) return <>{text}</>;
  const out: ReactNode[] = [];
  let at = 0;
  for (const s of spans) {
    out.push(text.slice(at, s.start));
    out.push(
      <mark key={s.start} className="search-match" title={t('inspector.searchMatch')}>
        {text.slice(s.start, s.end)}
      </mark>,
    );
    at = s.end;
  }
  out.push(text.slice(at));
  return <>{out}</>;
}
