/**
 * `memagent read` with several questions against an OpenAI-compatible server:
 * the requests of one step in flight together, each question's requests the
 * same as a read of it alone, and a question the server keeps failing failing
 * alone, then resumed.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prose } from './fixtures/documents';
import { type CliOutcome, runCli } from './support/cli';
import { type OpenAITestServer, startOpenAIServer } from './support/openai-server';

const QUESTIONS = ['Where was the warden of Gull Rock born?', 'What colour is the lighthouse on Gull Rock?', 'Who built the bridge at Saltmarsh?'];
const FACTS = [
  'The warden of Gull Rock was born in Port Meridian.',
  'The lighthouse on Gull Rock is painted a deep red colour.',
  'The bridge at Saltmarsh was built by Ada Penhallow.',
];

let server: OpenAITestServer;
let dir: string;
let book: string;
/** The read never interrupted: what the read that loses a question must end with once resumed. */
let reference: { stdout: string; journals: Line[][] };

function memagent(args: string[]): Promise<CliOutcome> {
  // No prompt file can be fetched from here: reads use the app's wording, as offline.
  return runCli([...args, '--prompts-base', 'http://127.0.0.1:9'], { env: { MEMAGENT_CACHE_DIR: join(tmpdir(), 'memagent-cli-no-cache') } });
}

const read = (baseUrl: string, out: string, ...more: string[]) =>
  memagent(['read', book, '--base-url', baseUrl, '--model', 'memagent-test', '--chunk', '300', '--memory', '256', '--out', out, ...more]);
const asked = (questions: readonly string[]) => questions.flatMap((q) => ['-q', q]);

interface Line {
  type: string;
  index?: number;
  memory?: string;
  answer?: string;
  chunks?: [number, number, number][];
}
const journal = (path: string): Line[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
const steps = (lines: Line[]) => lines.slice(1).map((l) => [l.type, l.index, l.memory, l.answer]);
const journals = (out: string) => [1, 2, 3].map((n) => journal(out.replace(/\.jsonl$/, `.q${n}.jsonl`)));
/** The text printed for question `n` (from 1). */
const block = (stdout: string, n: number) => stdout.split(/^(?=Question \d: )/m)[n - 1];

/** The prompt of a chat request's body: its last message. */
const promptOf = (body: Record<string, unknown>) => (body.messages as { content: string }[]).at(-1)!.content;

/** A server in front of `target` that answers a server error (500) to every chat request whose prompt `fails` picks, and passes the rest on. */
async function failingProxy(target: OpenAITestServer, fails: (prompt: string) => boolean): Promise<{ url: string; close(): Promise<void> }> {
  const origin = target.url.replace(/\/v1$/, '');
  const proxy: Server = createServer((req, res) => {
    void (async () => {
      const parts: Buffer[] = [];
      for await (const c of req) parts.push(c as Buffer);
      const body = Buffer.concat(parts);
      if (req.url?.endsWith('/chat/completions') && fails(promptOf(JSON.parse(body.toString('utf8')) as Record<string, unknown>))) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'The engine failed', type: 'InternalServerError', param: null, code: 500 } }));
        return;
      }
      const upstream = await fetch(`${origin}${req.url}`, {
        method: req.method,
        headers: { 'Content-Type': 'application/json', Accept: req.headers.accept ?? '*/*' },
        ...(req.method !== 'GET' && { body }),
      });
      res.writeHead(upstream.status, { 'Content-Type': upstream.headers.get('content-type') ?? 'application/json' });
      if (upstream.body) for await (const c of upstream.body) res.write(c);
      res.end();
    })();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/v1`, close: () => new Promise((resolve) => proxy.close(() => resolve())) };
}

beforeAll(async () => {
  server = await startOpenAIServer({ keepBodies: true });
  dir = mkdtempSync(join(tmpdir(), 'memagent-questions-server-'));
  book = join(dir, 'gull-rock.txt');
  writeFileSync(book, [prose(1, 30), FACTS[0], prose(2, 40), FACTS[1], prose(3, 40), FACTS[2], prose(4, 30)].join('\n\n'));
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('memagent read with several questions on a server', () => {
  it('has the three questions’ requests of a step in flight together, each question’s requests those of a read of it alone', async () => {
    const out = join(dir, 'three.jsonl');
    const before = server.chatBodies.length;
    // The first three requests wait unanswered: a read that sent them one at a time would never get to the third.
    let first = 3;
    const held = server.hold(() => first-- > 0);
    const reading = read(server.url, out, ...asked(QUESTIONS));
    await held;
    await server.whenHeld(3);
    const heldPrompts = server.chatBodies.slice(before).map(promptOf);
    QUESTIONS.forEach((q) => expect(heldPrompts.filter((p) => p.includes(q))).toHaveLength(1));
    server.release();
    const r = await reading;
    expect(r.code).toBe(0);
    QUESTIONS.forEach((q, i) => {
      expect(block(r.stdout, i + 1)!.startsWith(`Question ${i + 1}: ${q}\n`)).toBe(true);
      expect(block(r.stdout, i + 1)).toContain('\nSources:\n');
    });
    reference = { stdout: r.stdout, journals: journals(out) };
    const chunks = reference.journals[0]![0]!.chunks!.length;
    expect(chunks).toBeGreaterThan(3);
    const multi = server.chatBodies.slice(before);
    expect(multi).toHaveLength(3 * (chunks + 1));

    const alone = server.chatBodies.length;
    const single = await read(server.url, join(dir, 'alone.jsonl'), '-q', QUESTIONS[1]!);
    expect(single.code).toBe(0);
    const ownRequests = multi.filter((b) => promptOf(b).includes(QUESTIONS[1]!));
    expect(JSON.stringify(server.chatBodies.slice(alone))).toBe(JSON.stringify(ownRequests));
  });

  it('when the server keeps failing one question, the others are answered, that one is reported and its journal kept, and --resume finishes it', async () => {
    const out = join(dir, 'failing.jsonl');
    // The second question's requests fail from its third chunk on, retries included.
    let seen = 0;
    const proxy = await failingProxy(server, (prompt) => prompt.includes(QUESTIONS[1]!) && ++seen > 2);
    let r: CliOutcome;
    try {
      r = await read(proxy.url, out, ...asked(QUESTIONS), '--retries', '1', '--retry-delay', '10', '--progress', 'lines');
    } finally {
      await proxy.close();
    }
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^q2 failed: .*Gave up after 2 attempts.* 2 of \d+ chunks are saved in .*failing\.q2\.jsonl\.$/m);
    expect(r.stderr).toContain('1 of 3 questions failed; saved: q2: 2 of');
    expect(r.stderr).toContain('Run the same command with --resume to continue it.');
    // The others read on to their answers: the same as the read never interrupted.
    expect(
      r.stderr
        .trimEnd()
        .split('\n')
        .filter((l) => / chunk /.test(l))
        .at(-1),
    ).toMatch(/ · 2 of 3 questions writing$/);
    expect(block(r.stdout, 1)).toBe(block(reference.stdout, 1));
    expect(block(r.stdout, 2)).toMatch(/^Question 2: .*\nNo answer: .*Gave up after 2 attempts/);
    expect(block(r.stdout, 3)).toBe(block(reference.stdout, 3));
    const after = journals(out);
    expect(steps(after[1]!)).toEqual(steps(reference.journals[1]!).slice(0, 2));
    expect(steps(after[0]!)).toEqual(steps(reference.journals[0]!));

    const resumed = await read(server.url, out, ...asked(QUESTIONS), '--resume');
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('q2: resuming at chunk 3 of');
    expect(resumed.stdout).toBe(reference.stdout);
    journals(out).forEach((lines, i) => expect(steps(lines)).toEqual(steps(reference.journals[i]!)));
  });
});
