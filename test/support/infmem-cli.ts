/**
 * What the command line's InfMem tests share: a folder with the stand-in
 * files served as a mirror of the pinned ones, and `memagent read --method
 * infmem` run in this process against them with its output captured.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { INFMEM_FILES } from '../../src/core/infmem/official-files';
import { type InfmemCliEnvironment, readInfmemCommand } from '../../src/cli/read-infmem';
import { FNCALL_STANDIN, INFMEM_STANDIN, infmemStandinSpecs } from './infmem-standins';
import { serveFiles } from './serve-fixtures';

/** A stream that keeps what is written to it. */
export function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** A test's folder, and the stand-in files served from it where the pinned files would be. */
export interface InfmemBench {
  dir: string;
  mirror: { url: string; close(): Promise<void> };
  /** Stops the mirror and removes the folder. */
  close(): Promise<void>;
}

export async function infmemBench(prefix: string): Promise<InfmemBench> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [spec, bytes] of [
    [INFMEM_FILES.infmem, INFMEM_STANDIN],
    [INFMEM_FILES.fncall, FNCALL_STANDIN],
  ] as const) {
    mkdirSync(dirname(join(dir, 'mirror', spec.path)), { recursive: true });
    writeFileSync(join(dir, 'mirror', spec.path), bytes);
  }
  const mirror = await serveFiles({ port: 0, roots: { '/': join(dir, 'mirror') } });
  return {
    dir,
    mirror,
    close: async () => {
      await mirror.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `memagent read` with `argv`, both files fetched from the bench's mirror
 * (unless `argv` names other bases, which win) and checked against the
 * stand-ins' hashes, kept in the folder's `cache`.
 */
export async function readInfmem(
  bench: InfmemBench,
  argv: string[],
  options: { cache?: string; environment?: InfmemCliEnvironment } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = capture();
  const err = capture();
  const code = await readInfmemCommand(['--prompts-base', bench.mirror.url, '--fncall-base', bench.mirror.url, ...argv], () => 0, {
    specs: await infmemStandinSpecs(),
    cacheDir: join(bench.dir, options.cache ?? 'cache'),
    stdout: out.stream,
    stderr: err.stream,
    ...options.environment,
  });
  return { code, stdout: out.text(), stderr: err.text() };
}
