import { lazy, type MouseEvent, Suspense, useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { App } from './App';
import { AppUpdate } from './AppUpdate';
import { LanguageSwitch } from './LanguageSwitch';
import { LostBooksNotice } from './LostBooksNotice';
import { PLACES, takeArrivalFocus, usePlace } from './route';
import { useReadNotices } from './useReadNotices';
import './shell.css';

const EvaluatePage = lazy(() => import('./evaluate/EvaluatePage').then((m) => ({ default: m.EvaluatePage })));

/** The top navigation and the places it leads to. */
export function Shell() {
  const { t } = useTranslation();
  const place = usePlace();
  const shown = useRef(place);
  const main = useRef<HTMLElement>(null);
  useReadNotices();

  useEffect(() => {
    if (shown.current === place) return;
    shown.current = place;
    // A new place starts at its top, with focus on its heading, as a new page would.
    window.scrollTo(0, 0);
    // Or where the way here asked for it (a run opened from the Library: the run).
    const arrival = takeArrivalFocus();
    if (arrival) return void arrival.focus({ preventScroll: true });
    const focusHeading = () => {
      const heading = document.querySelector<HTMLElement>(`[data-place="${place}"] h1`);
      if (!heading) return false;
      heading.focus({ preventScroll: true });
      return true;
    };
    // The Evaluate page may still be loading its code.
    if (!focusHeading()) {
      const timer = setInterval(() => focusHeading() && clearInterval(timer), 50);
      setTimeout(() => clearInterval(timer), 5000);
      return () => clearInterval(timer);
    }
  }, [place]);

  /** The skip link: focus to the place's heading, past the navigation (the address's hash is the place, so it is not followed). */
  const skipToMain = (e: MouseEvent) => {
    e.preventDefault();
    const heading = document.querySelector<HTMLElement>(`[data-place="${place}"] h1`);
    (heading ?? main.current)?.focus();
  };

  return (
    <>
      <a href="#main" className="skip-link" onClick={skipToMain}>
        {t('readPage.skipToMain')}
      </a>
      <header className="top">
        <span className="brand">memagent-web</span>
        <nav aria-label={t('shell.pages')} className="pages">
          {PLACES.map((p) => (
            <a key={p.id} href={p.hash} aria-current={place === p.id ? 'page' : undefined}>
              {t(`shell.place.${p.id}`)}
            </a>
          ))}
        </nav>
        <LanguageSwitch />
      </header>
      <main className="places" id="main" ref={main} tabIndex={-1}>
        <AppUpdate />
        <LostBooksNotice />
        <App place={place} />
        {/* Evaluate mounts only while shown: its sweeps live in the worker, and its form starts afresh. */}
        {place === 'evaluate' && (
          <div data-place="evaluate">
            <Suspense fallback={<p className="hint">{t('shell.loading')}</p>}>
              <EvaluatePage />
            </Suspense>
          </div>
        )}
      </main>
    </>
  );
}
