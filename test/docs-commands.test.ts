/**
 * The README and the pages under docs/ say only what holds: every relative
 * link resolves (the file, and the heading an #anchor names), and every
 * command in a `sh` block runs as written from the repository root (after
 * `npm ci` and a build, as .ci/run leaves it). Blocks marked
 * `sh long-running` are started, must serve, and are stopped; blocks marked
 * `sh needs-gpu` or `sh needs-server` are listed, not run. Blocks marked
 * `sh test` (parts of the suite, which `npm test` or .ci/run runs anyway) and
 * `sh bench` (benchmarks, minutes of both cores) are not run from here: every
 * npm script and file they name must exist. The rules are described in
 * docs/testing.md.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeBlocks, headingAnchors, links, memagentFlags, type CodeBlock } from './support/markdown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

/** The marks a `sh` block may carry, and what the test does with each. */
const MARKS = ['', 'long-running', 'needs-gpu', 'needs-server', 'test', 'bench'] as const;
/** The command that runs this very test: it is checked by being the run, never run from inside it. */
const THE_SUITE = /^npm (run )?test$/;

const blocks = PAGES.flatMap((page) => codeBlocks(read(page)).map((b) => ({ ...b, page }))).filter((b) => b.lang === 'sh');
const where = (b: CodeBlock & { page: string }) => `${b.page}:${b.line} ${b.commands[0]?.split('\n')[0] ?? ''}`;

describe('the checker reads pages as GitHub shows them', () => {
  it('makes anchors from headings as GitHub does', () => {
    const page = [
      "## The paper's benchmark: RULER-HotpotQA by the paper's method",
      '## llama.cpp engine (a model on your processor)',
      '### `memagent read` and **eval**',
      '## Tests',
      '## Tests',
      '```sh',
      '## not a heading',
      '```',
    ].join('\n');
    expect([...headingAnchors(page)]).toEqual([
      'the-papers-benchmark-ruler-hotpotqa-by-the-papers-method',
      'llamacpp-engine-a-model-on-your-processor',
      'memagent-read-and-eval',
      'tests',
      'tests-1',
    ]);
  });

  it('finds links and images outside code, and sh blocks with their marks and continued lines', () => {
    const page = [
      'See [a](docs/a.md#x) and ![p](docs/p.png), not `[b](b.md)`.',
      '```sh needs-gpu',
      'vllm serve m \\',
      '  --port 8000',
      '# a comment',
      'ray start',
      '```',
    ].join('\n');
    expect(links(page)).toEqual([
      { target: 'docs/a.md#x', line: 1 },
      { target: 'docs/p.png', line: 1 },
    ]);
    expect(codeBlocks(page)).toEqual([{ lang: 'sh', marks: 'needs-gpu', line: 2, commands: ['vllm serve m \\\n  --port 8000', 'ray start'] }]);
    expect(memagentFlags('npx memagent eval --data a.json --json out.json')).toEqual(['--data', '--json']);
    expect(memagentFlags('vllm serve m --served-model-name memagent-14b --port 8000')).toEqual([]);
  });
});

describe('links in the README and docs', () => {
  for (const page of PAGES) {
    it(`every relative link in ${page} resolves`, () => {
      const broken: string[] = [];
      for (const { target, line } of links(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split('#', 2) as [string, string | undefined];
        const file = path === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), decodeURIComponent(path));
        if (!existsSync(file)) {
          broken.push(`${page}:${line} ${target}: no file ${relative(ROOT, file)}`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(anchor)) {
          broken.push(`${page}:${line} ${target}: no heading #${anchor} in ${relative(ROOT, file)}`);
        }
      }
      expect(broken).toEqual([]);
    });
  }

  it('the README stays a front page: at most 150 lines, with its picture', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
    expect(links(readme).map((l) => l.target)).toContain('docs/read-inspector.png');
  });
});

describe('commands in the README and docs', () => {
  it('every sh block carries a mark the test knows', () => {
    expect(blocks.filter((b) => !(MARKS as readonly string[]).includes(b.marks)).map(where)).toEqual([]);
    expect(blocks.length).toBeGreaterThan(0);
  });

  it("the README's command-line examples write in the folder they are run from, not the repository's .tmp/", () => {
    const cli = blocks.filter((b) => b.page === 'README.md').flatMap((b) => b.commands.filter((c) => /\bmemagent (read|eval)\b|npm run eval\b/.test(c)));
    expect(cli.some((c) => c.includes(' --out '))).toBe(true);
    expect(cli.filter((c) => /\s\.tmp\//.test(c))).toEqual([]);
  });

  it('npm test is the suite this test runs in, so it is checked by being run, not from here', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).toContain('npm run test:unit');
    expect(pkg.scripts['test:unit']).toMatch(/^vitest run/);
    expect(blocks.some((b) => b.commands.some((c) => THE_SUITE.test(c)))).toBe(true);
  });

  it('every memagent flag a page shows is one memagent --help lists, run or not', async () => {
    const { code, stdout } = await shell('npx memagent --help', 60_000);
    expect(code).toBe(0);
    const known = new Set(stdout.match(/--[a-z][a-z0-9-]*/g));
    const unknown = blocks.flatMap((b) =>
      b.commands.flatMap((c) =>
        memagentFlags(c)
          .filter((f) => !known.has(f))
          .map((f) => `${where(b)}: ${f}`),
      ),
    );
    expect(unknown).toEqual([]);
  });

  const listed = blocks.filter((b) => b.marks === 'needs-gpu' || b.marks === 'needs-server');
  it(`lists the ${listed.length} blocks that need a GPU or a server, without running them`, () => {
    for (const b of listed) console.info(`not run (${b.marks}): ${where(b)}`);
    for (const b of listed) expect(b.commands.length, where(b)).toBeGreaterThan(0);
  });

  const named = blocks.filter((b) => b.marks === 'test' || b.marks === 'bench');
  it(`every script and file the ${named.length} test and bench blocks name exists`, () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    const missing = named.flatMap((b) =>
      b.commands.flatMap((c) => [
        ...[...c.matchAll(/\bnpm run ([\w:-]+)/g)]
          .map((m) => m[1]!)
          .filter((s) => !(s in pkg.scripts))
          .map((s) => `${where(b)}: no script ${s}`),
        ...c
          .split(/\s+/)
          .filter((w) => /^(test|e2e|bench|scripts)\/\S+\.(ts|mts|mjs|js)$/.test(w) && !existsSync(join(ROOT, w)))
          .map((w) => `${where(b)}: no file ${w}`),
      ]),
    );
    expect(missing).toEqual([]);
  });

  // A command shown on several pages runs once, where it is first shown.
  const seen = new Set<string>();
  for (const b of blocks.filter((x) => x.marks === '')) {
    const fresh = b.commands.filter((c) => !THE_SUITE.test(c) && !seen.has(c));
    fresh.forEach((c) => seen.add(c));
    const script = fresh.join('\n');
    if (script === '') continue;
    it(`runs as written: ${where(b)}`, { timeout: 240_000 }, async () => {
      const { code, stdout, stderr } = await shell(`set -e\n${script}`, 230_000);
      expect(code, `${script}\n--- stdout\n${stdout.slice(-2000)}\n--- stderr\n${stderr.slice(-2000)}`).toBe(0);
    });
  }

  for (const b of blocks.filter((x) => x.marks === 'long-running')) {
    it(`starts, serves and stops: ${where(b)}`, { timeout: 300_000 }, async () => {
      const port = await freePort();
      const served = await serveAndStop(b.commands.join('\n'), { MEMAGENT_PORT: String(port) }, 280_000);
      expect(served.url, served.output.slice(-3000)).toMatch(new RegExp(`^http://(127\\.0\\.0\\.1|localhost):${port}/?$`));
      expect(served.status, served.output.slice(-3000)).toBe(200);
      expect(served.body).toContain('<title>');
    });
  }
});

/** Runs a script with bash from the repository root; resolves to its exit code and output. */
function shell(script: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/**
 * Starts a command that serves and never ends, waits for the local address it
 * prints (a build's warnings name other sites before it), asks that address for its page, and stops the command's whole
 * process group (npm, the shell and vite under it).
 */
async function serveAndStop(
  script: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ url: string | null; status: number | null; body: string; output: string }> {
  const child = spawn('bash', ['-c', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const exited = new Promise<void>((done) => child.on('close', () => done()));
  try {
    const url = await new Promise<string | null>((found) => {
      const timer = setTimeout(() => found(null), timeoutMs);
      const look = (d: Buffer) => {
        output += d.toString();
        // eslint-disable-next-line no-control-regex -- the servers colour their output
        const m = /(https?:\/\/(?:127\.0\.0\.1|localhost):\d+\/?)/.exec(output.replace(/\u001b\[[\d;]*m/g, ''));
        if (m) {
          clearTimeout(timer);
          found(m[1]!);
        }
      };
      child.stdout.on('data', look);
      child.stderr.on('data', look);
      void exited.then(() => {
        clearTimeout(timer);
        found(null);
      });
    });
    if (!url) return { url, status: null, body: '', output };
    const res = await fetch(url);
    return { url, status: res.status, body: await res.text(), output };
  } finally {
    if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    await exited;
  }
}

function freePort(): Promise<number> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
