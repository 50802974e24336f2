import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';
import { findEntryImports } from '../scripts/worker-chunks.mjs';
import { exposeOnce } from '../workers/expose-once';
import { startOnce } from '../workers/start-once';

const made: string[] = [];
afterAll(() => Promise.all(made.map((d) => rm(d, { recursive: true, force: true }))));

async function fakeDist(files: Record<string, string>): Promise<string> {
  const dist = await mkdtemp(join(tmpdir(), 'worker-chunks-'));
  made.push(dist);
  await mkdir(join(dist, 'assets'));
  for (const [name, code] of Object.entries(files)) await writeFile(join(dist, name), code);
  return dist;
}

const page = 'const w=new Worker(new URL(`/assets/agent.worker.entry-A1.js`,``+import.meta.url),{type:`module`,name:`agent`});';

describe('the check that no chunk imports a worker entry', () => {
  it('names each chunk that imports the worker entry, statically or dynamically', async () => {
    const dist = await fakeDist({
      'assets/index-P1.js': page,
      'assets/agent.worker.entry-A1.js': 'export const t=1;import("./agent.worker-S1.js");',
      'assets/agent.worker-S1.js': 'import{t}from"./agent.worker.entry-A1.js";import("./engine-E1.js");',
      'assets/engine-E1.js': 'const m=await import("./agent.worker.entry-A1.js");export{m};',
    });
    const { entries, offences } = await findEntryImports(dist);
    expect(entries).toEqual(['agent.worker.entry-A1.js']);
    expect(offences).toEqual(
      expect.arrayContaining([
        { chunk: join('assets', 'agent.worker-S1.js'), imports: 'agent.worker.entry-A1.js' },
        { chunk: join('assets', 'engine-E1.js'), imports: 'agent.worker.entry-A1.js' },
      ]),
    );
    expect(offences).toHaveLength(2);
  });

  it('passes a build whose chunks import only the services module', async () => {
    const dist = await fakeDist({
      'assets/index-P1.js': page,
      'assets/agent.worker.entry-A1.js': 'import("./agent.worker-S1.js");',
      'assets/agent.worker-S1.js': 'export const t=1;import("./engine-E1.js");',
      'assets/engine-E1.js': 'import{t}from"./agent.worker-S1.js";export{t};',
    });
    expect(await findEntryImports(dist)).toEqual({ entries: ['agent.worker.entry-A1.js'], offences: [] });
  });

  it('passes the real build, where the agent worker entry is found', { timeout: 180_000 }, async () => {
    const outDir = await mkdtemp(join(tmpdir(), 'worker-chunks-build-'));
    made.push(outDir);
    await build({ logLevel: 'silent', build: { outDir, emptyOutDir: true } });
    const { entries, offences } = await findEntryImports(outDir);
    expect(entries.some((e) => e.startsWith('agent.worker.entry-'))).toBe(true);
    expect(offences).toEqual([]);
  });
});

describe('the worker entry guard', () => {
  it('starts the services once and logs a second evaluation instead of starting them again', async () => {
    const scope = {};
    const log: string[] = [];
    let starts = 0;
    const start = () => (starts++, Promise.resolve());
    expect(startOnce(scope, start, (m) => log.push(m))).toBe(true);
    expect(startOnce(scope, start, (m) => log.push(m))).toBe(false);
    expect(starts).toBe(1);
    expect(log).toEqual([expect.stringContaining('evaluated a second time')]);
  });

  it('makes a second expose on the same scope impossible', () => {
    const scope = {};
    const log: string[] = [];
    let exposed = 0;
    expect(
      exposeOnce(
        scope,
        () => exposed++,
        (m) => log.push(m),
      ),
    ).toBe(true);
    expect(
      exposeOnce(
        scope,
        () => exposed++,
        (m) => log.push(m),
      ),
    ).toBe(false);
    expect(exposed).toBe(1);
    expect(log).toHaveLength(1);
  });

  it('logs a failed start rather than leaving it unhandled', async () => {
    const log: string[] = [];
    startOnce(
      {},
      () => Promise.reject(new Error('no chunk')),
      (m) => log.push(m),
    );
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual(['The agent worker could not start: no chunk']);
  });
});
