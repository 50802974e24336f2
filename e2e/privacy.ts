import { readFileSync } from 'node:fs';
import { type BrowserContext, expect, type Worker } from '@playwright/test';
import { CORPUS, PLANTED } from './helpers';

export interface Recorded {
  url: string;
  method: string;
  /** Body and headers, where document text could hide. */
  carried: string;
  fromServiceWorker: boolean;
}

export interface Violation {
  blockedURI: string;
  violatedDirective: string;
  sourceFile: string;
}

export interface Traffic {
  requests: Recorded[];
  /** What the policy refused, as the pages and their workers reported it. */
  violations(): Promise<Violation[]>;
}

type Scope = { __cspViolations?: Violation[] };

/**
 * Records every request of the context (pages, their workers, the service
 * worker) with what it carries, and every Content Security Policy violation
 * that pages and their workers report. (Chromium's own "Refused to connect"
 * lines never reach Playwright's console events, so the events are listened to.)
 */
export async function watchTraffic(context: BrowserContext): Promise<Traffic> {
  const requests: Recorded[] = [];
  const violations: Violation[] = [];
  const workers = new Set<Worker>();
  context.on('request', (r) => {
    requests.push({
      url: r.url(),
      method: r.method(),
      carried: `${r.postData() ?? ''}\n${Object.values(r.headers()).join('\n')}`,
      fromServiceWorker: r.serviceWorker() !== null,
    });
  });
  await context.exposeFunction('__cspViolation', (v: Violation) => violations.push(v));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __cspViolation(v: unknown): void }).__cspViolation;
      report({ blockedURI: e.blockedURI, violatedDirective: e.violatedDirective, sourceFile: e.sourceFile });
    });
  });
  // A worker keeps its own list, read back at the end; it starts listening as soon as Playwright sees it.
  const listenIn = (worker: Worker) => {
    workers.add(worker);
    worker.on('close', () => workers.delete(worker));
    void worker
      .evaluate(() => {
        const scope = self as unknown as Scope;
        scope.__cspViolations = [];
        self.addEventListener('securitypolicyviolation', (e) => {
          scope.__cspViolations!.push({ blockedURI: e.blockedURI, violatedDirective: e.violatedDirective, sourceFile: e.sourceFile });
        });
      })
      .catch(() => undefined);
  };
  context.on('page', (page) => page.on('worker', listenIn));
  for (const page of context.pages()) page.on('worker', listenIn);
  const all = async () => {
    // Reports from pages travel through a binding: give the last ones a moment to land.
    await new Promise((r) => setTimeout(r, 200));
    const fromWorkers = await Promise.all(
      [...workers].map((w) => w.evaluate(() => (self as unknown as Scope).__cspViolations ?? []).catch(() => [] as Violation[])),
    );
    return [...violations, ...fromWorkers.flat()];
  };
  return { requests, violations: all };
}

/** Text that exists only in the books and questions the tests read: none of it may appear in any request. */
export const SECRETS = [
  PLANTED.sentence,
  PLANTED.code,
  'Marlowe',
  PLANTED.question,
  // A sentence of the book itself, as the worker reads it.
  readFileSync(new URL('frankenstein.txt', CORPUS), 'utf8').match(/I am by birth a Genevese[^.]*/)![0],
];

/**
 * Every request went to one of `origins` (or was local: blob:, data:), none
 * carried document or question text, and the policy refused nothing the app
 * itself tried.
 */
export async function expectPrivate(traffic: Traffic, origins: readonly string[], secrets: readonly string[] = SECRETS): Promise<void> {
  const local = (url: string) => /^(blob|data):/.test(url);
  const elsewhere = traffic.requests.filter((r) => !local(r.url) && !origins.includes(new URL(r.url).origin)).map((r) => r.url);
  expect(elsewhere, 'requests to other origins').toEqual([]);
  const decoded = (url: string) => {
    try {
      return decodeURIComponent(url.replace(/\+/g, ' '));
    } catch {
      return url;
    }
  };
  const leaks = traffic.requests.flatMap((r) =>
    secrets.filter((s) => decoded(r.url).includes(s) || r.url.includes(s) || r.carried.includes(s)).map((s) => `${r.method} ${r.url}: "${s}"`),
  );
  expect(leaks, 'requests carrying document or question text').toEqual([]);
  expect(await traffic.violations(), 'Content Security Policy violations').toEqual([]);
}
