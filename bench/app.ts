import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from '@playwright/test';

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
