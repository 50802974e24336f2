import { lazy, Suspense, useEffect, useSyncExternalStore } from 'react';
import { App } from './App';
import { agent, call, store } from './client';
import { useReadNotices } from './useReadNotices';
import './shell.css';

const EvaluatePage = lazy(() => import('./evaluate/EvaluatePage').then((m) => ({ default: m.EvaluatePage })));

type Route = 'read' | 'evaluate';

function routeOf(hash: string): Route {
  return hash.startsWith('#/evaluate') ? 'evaluate' : 'read';
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

/** The pages, by hash route (#/evaluate), so that a static host serves every one. */
export function Shell() {
  const route = useSyncExternalStore(subscribe, () => routeOf(location.hash));
  useReadNotices();

  useEffect(() => {
    // Sweeps that were running when the page went away carry on, whichever page opens.
    void (async () => {
      for (const e of await (await store).listEvaluations()) {
        if (e.status === 'running') void call(agent.resumeEvaluation(e.id)).catch(() => undefined);
      }
    })();
  }, []);

  return (
    <>
      <nav aria-label="Pages" className="pages">
        <a href="#/" aria-current={route === 'read' ? 'page' : undefined}>
          Read
        </a>
        <a href="#/evaluate" aria-current={route === 'evaluate' ? 'page' : undefined}>
          Evaluate
        </a>
      </nav>
      {route === 'evaluate' ? (
        <Suspense fallback={<p className="hint">Loading…</p>}>
          <EvaluatePage />
        </Suspense>
      ) : (
        <App />
      )}
    </>
  );
}
