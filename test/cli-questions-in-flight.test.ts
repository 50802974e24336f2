/**
 * `memagent read` with several questions on a server and --in-flight: the
 * server holds every request until the test lets it go, so what it sees at
 * once is what the command sends at once, however fast either side is.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { prose } from './fixtures/documents';
import { type CliOutcome, runCli } from './support/cli';
import { type OpenAITestServer, startOpenAIServer } from './support/openai-server';

const QUESTIONS = ['Where was the warden of Gull Rock born?', 'What colour is the lighthouse on Gull Rock?', 'Who built the bridge at Saltmarsh?'];
const FACTS = [
  'The warden of Gull Rock was born in Port Meridian.',
  'The lighthouse on Gull Rock is painted a deep red colour.',
  'The bridge at Saltmarsh was built by Ada Penhallow.',
];

let server: OpenAITestServer | undefined;
let dir: string;
let book: string;

function memagent(args: string[]): Promise<CliOutcome> {
  // No prompt file can be fetched from here: reads use the app's wording, as offline.
  return runCli([...args, '--prompts-base', 'http://127.0.0.1:9'], { env: { MEMAGENT_CACHE_DIR: join(tmpdir(), 'memagent-cli-no-cache') } });
}

const read = (baseUrl: string, out: string, ...more: string[]) =>
  memagent(['read', book, '--base-url', baseUrl, '--model', 'memagent-test', '--chunk', '300', '--memory', '256', '--out', out, ...more]);
const asked = QUESTIONS.flatMap((q) => ['-q', q]);

/**
 * Reads the three questions with `--in-flight n` against a server that holds
 * every request: the first step's requests are let go once `n` are held
 * together (the command sent that many at once), every later one as soon as
 * it arrives, until the read ends. Nothing waits on a clock: a reply paced at
 * a millisecond a token only gives requests sent beyond the bound the time
 * to be seen overlapping.
 */
async function readHeld(n: number): Promise<{ r: CliOutcome; server: OpenAITestServer }> {
  server = await startOpenAIServer({ tokenDelayMs: 1 });
  void server.hold(() => true);
  const reading = read(server.url, join(dir, `in-flight-${n}.jsonl`), ...asked, '--in-flight', String(n), '--progress', 'lines');
  const ended = reading.then(() => 'ended' as const);
  let together = n;
  // A read that ends first (one that failed at once) is told by its outcome below, not by a wait that never ends.
  while ((await Promise.race([server.whenHeld(together), ended])) !== 'ended') {
    server.releaseHeld();
    together = 1;
  }
  return { r: await reading, server };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memagent-questions-in-flight-'));
  book = join(dir, 'gull-rock.txt');
  writeFileSync(book, [prose(1, 20), FACTS[0], prose(2, 20), FACTS[1], prose(3, 20), FACTS[2], prose(4, 20)].join('\n\n'));
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('memagent read --in-flight with several questions on a server', () => {
  it('with --in-flight 1 sends the questions’ requests one at a time, and every question is answered', async () => {
    const { r, server } = await readHeld(1);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("At most 1 of the questions' requests are in flight at once (--in-flight); the others wait their turn.");
    expect(server.maxInFlight).toBe(1);
    QUESTIONS.forEach((q, i) => expect(r.stdout).toContain(`Question ${i + 1}: ${q}\n`));
    expect(r.stdout).not.toContain('No answer');
  }, 60_000);

  it('with --in-flight 2 has two requests in flight together, never three', async () => {
    const { r, server } = await readHeld(2);
    expect(r.code).toBe(0);
    expect(server.maxInFlight).toBe(2);
    QUESTIONS.forEach((q, i) => expect(r.stdout).toContain(`Question ${i + 1}: ${q}\n`));
  }, 60_000);

  it('refuses a bound outside 1 to 64 before anything is read, with exit code 2', async () => {
    const r = await read('http://127.0.0.1:9/v1', join(dir, 'refused.jsonl'), ...asked, '--in-flight', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--in-flight must be a whole number from 1 to 64, got "0".');
  });
});
