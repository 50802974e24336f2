import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from '@playwright/test';

/** The production build served by `vite preview`, and a Chromium to open it: what the benchmarks in the app measure. */
export interface BenchApp {
  url: string;
  browser: Browser;
  close(): Promise<void>;
}

export async function startApp(port: number, outDir = 'dist-bench', options: { built?: boolean } = {}): Promise<BenchApp> {
  if (!options.built) execFileSync('npx', ['vite', 'build', '--outDir', outDir, '--logLevel', 'error'], { stdio: 'inherit' });
  const server: ChildProcess = spawn('npx', ['vite', 'preview', '--port', String(port), '--strictPort', '--outDir', outDir], {
    stdio: 'ignore',
    detached: true,
  });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    try {
      await fetch(url);
      break;
    } catch (e) {
      if (tries > 150) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const executablePath = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));
  const browser = await chromium.launch({ executablePath, args: ['--disable-background-networking', '--disable-component-update'] });
  return {
    url,
    browser,
    async close() {
      await browser.close();
      if (server.pid) process.kill(-server.pid);
    },
  };
}

/** When the first step of the page's (only) run began: its revision 0's commit, less the engine call's own time, on the page's clock. */
export function firstStepAt(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((done) => {
        const open = indexedDB.open('memagent');
        open.onsuccess = () => {
          const req = open.result.transaction('revisions').objectStore('revisions').getAll();
          req.onsuccess = () => {
            const first = (req.result as { index: number; committedAt: number; ms: number }[]).find((r) => r.index === 0)!;
            done(first.committedAt - first.ms);
          };
        };
      }),
  );
}
