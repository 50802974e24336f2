/**
 * `memagent read --method infmem` journals every chunk with the planner's
 * state: a read stopped by Ctrl-C (and a line cut off by a crash) resumes with
 * `--resume` and sends exactly the requests the read that never stopped sent
 * from there, reaching the same answer; several questions each read and stop
 * on their own; `--chat qwen2.5` renders the requests in Qwen2.5's chat text.
 * Against the test server's raw completions, answering from a script.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infmemBench, type InfmemBench, readInfmem } from './support/infmem-cli';
import { atMost } from '../src/cli/infmem-readers';
import { readInfmemCommand } from '../src/cli/read-infmem';
import { isAbortError } from '../src/core/generation';
import type { CompletionRequest, CompletionResult } from '../src/core/infmem/thinking';
import { QWEN25_DEFAULT_SYSTEM } from '../src/engines/webllm/models/system-message';
import { runCli } from './support/cli';
import { type OpenAITestServer, startOpenAIServer } from './support/openai-server';

const Q1 = 'Where was the logbook kept?';
const Q2 = 'Who kept the logbook?';

let dir: string;
let book: string;
let bench: InfmemBench;

/** Which request a prompt is, by the stand-ins' words; before which chunk (the planner's step); whether it continues a thought. */
function kind(prompt: string) {
  const role = prompt.includes('Stand-in planner.') ? 'planner' : prompt.includes('Stand-in writer') ? 'writer' : 'final';
  const step = Number(/Current retrieval step: (\d+) /.exec(prompt)?.[1] ?? 0);
  return { role, step, stage: prompt.endsWith('<|im_start|>assistant\n') ? 1 : 2, question: prompt.includes(Q2) ? Q2 : Q1 };
}

/**
 * The planner searches before chunk 1 and votes to stop after (Q1), or
 * searches before chunks 1 and 2 and votes after (Q2); the writer notes
 * where its chunk begins; the final request answers by the question.
 */
function script(prompt: string): string {
  const { role, step, stage, question } = kind(prompt);
  if (role === 'planner') {
    const searches = question === Q1 ? 1 : 2;
    if (step > searches) return stage === 1 ? '<think>\nThe notes will do.\n</think>' : 'STOP';
    return stage === 1 ? '<think>\nLook it up.\n</think>' : `✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": "logbook step ${step}", "top_k": 4}`;
  }
  if (role === 'writer') return stage === 1 ? '<think>\nNoting.\n</think>' : `Noted the logbook up to ${/<recurrent_chunk>\n(Day \d+)/.exec(prompt)?.[1]}.`;
  if (stage === 1) return '<think>\nFrom memory.\n</think>';
  return question === Q1 ? 'Therefore, the answer is the archive.' : 'Therefore, the answer is the harbour master.';
}

/** The same replies whether or not a request continues a thought: with thinking off, the two families' requests end differently. */
function flatScript(prompt: string): string {
  const { role, step } = kind(prompt);
  if (role === 'planner') return step > 1 ? 'STOP' : '✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": "logbook", "top_k": 4}';
  return role === 'writer' ? 'Noted the logbook.' : 'Therefore, the answer is the archive.';
}

function read(server: OpenAITestServer, args: string[]) {
  return readInfmem(bench, [book, '--method', 'infmem', '--base-url', server.url, '--model', server.model, ...args]);
}

/** A server answering from `script` that sends Ctrl-C as the request `interruptAt` picks arrives: the read is waiting on it, as a person's read waits on the server. */
async function interruptibleServer() {
  const at: { interruptAt: ((prompt: string) => boolean) | null } = { interruptAt: null };
  const server = await startOpenAIServer({
    completions: (body) => {
      const prompt = String(body.prompt);
      if (at.interruptAt?.(prompt)) {
        at.interruptAt = null;
        process.emit('SIGINT');
      }
      return script(prompt);
    },
  });
  return { server, at };
}

/** The prompts and token budgets the server was sent from request `from` on. */
function sentSince(server: OpenAITestServer, from = 0) {
  return server.completionBodies.slice(from).map((b) => ({ prompt: String(b.prompt), max_tokens: b.max_tokens }));
}

type Line = { type: string; index?: number; memory?: string; votes?: number; history?: unknown[]; answer?: string; final?: string; step?: number };
const journal = (path: string): Line[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
/** What a journal says of the read, without its times. */
const story = (lines: Line[]) =>
  lines.slice(1).map(({ type, index, memory, votes, history, answer, final, step }) => ({ type, index, memory, votes, history, answer, final, step }));

beforeAll(async () => {
  bench = await infmemBench('memagent-cli-infmem-resume-');
  dir = bench.dir;
  book = join(dir, 'book.txt');
  const lines: string[] = [];
  for (let i = 0; i < 1100; i++) lines.push(`Day ${i + 1}: the quay keeper counted ${i % 13} crates of salt and ${i % 7} barrels before the tide.`);
  lines.splice(550, 0, 'The harbour master kept the logbook in the archive under the chapel.');
  writeFileSync(book, lines.join('\n'));
});

afterAll(() => bench.close());

describe('memagent read --method infmem: the journal and --resume', () => {
  it('a read stopped by Ctrl-C before chunk 4 resumes with its votes and searches, sending the very requests of a read never stopped and reaching its answer', async () => {
    const { server, at } = await interruptibleServer();
    try {
      const ask = ['-q', Q2, '--early-stop', '2'];
      const whole = join(dir, 'whole.infmem.jsonl');
      const never = await read(server, [...ask, '--out', whole]);
      expect(never.code, never.stderr).toBe(0);
      expect(never.stdout).toMatch(/^the harbour master\n\nSources:\n/);
      const reference = sentSince(server);
      // Searches before chunks 1 and 2, a vote before 3 (1 of 2) and 4 (2 of 2): the read ends before chunk 4.
      expect(never.stderr).toContain('Stopped before chunk 4: 2 votes in a row.');
      expect(story(journal(whole)).map((l) => [l.type, l.index, l.votes, l.history?.length])).toEqual([
        ['revision', 0, 0, 1],
        ['revision', 1, 0, 2],
        ['revision', 2, 1, 2],
        ['answer', undefined, undefined, undefined],
      ]);

      // The same read, stopped as the planner is asked about chunk 4: three chunks written, one vote and two searches carried.
      const out = join(dir, 'stopped.infmem.jsonl');
      const before = server.completionBodies.length;
      at.interruptAt = (prompt) => kind(prompt).role === 'planner' && kind(prompt).step === 4 && kind(prompt).stage === 1;
      const stopped = await read(server, [...ask, '--out', out]);
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(stopped.stdout).toBe('');
      expect(stopped.stderr).toMatch(/Stopped\. 3 of \d+ chunks are saved in .*stopped\.infmem\.jsonl; run the same command with --resume to continue\./);
      const first = sentSince(server, before);
      expect(first).toEqual(reference.slice(0, first.length));
      expect(story(journal(out))).toEqual(story(journal(whole)).slice(0, 3));
      // A line half written when a process dies does not count.
      appendFileSync(out, '{"type":"revision","index":3,"memo');

      const again = server.completionBodies.length;
      const resumed = await read(server, [...ask, '--out', out, '--resume']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain(`Resuming at chunk 4 of `);
      expect(resumed.stderr).toContain('with 1 vote to stop in a row and 2 searches so far.');
      expect(resumed.stderr).toMatch(/Read 4 of \d+ chunks \(3 of them written before this run\) in /);
      expect(resumed.stdout).toBe(never.stdout);
      // From the planner's request before chunk 4 on, the resumed read sends what the read never stopped sent.
      expect(sentSince(server, again)).toEqual(reference.slice(first.length - 1));
      expect(story(journal(out))).toEqual(story(journal(whole)));

      // A finished journal: --resume prints its answer again and sends nothing.
      const sent = server.completionBodies.length;
      const finished = await read(server, [...ask, '--out', out, '--resume']);
      expect([finished.code, finished.stdout, server.completionBodies.length]).toEqual([0, never.stdout, sent]);
      expect(finished.stderr).toContain('is a finished read: its answer follows.');
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('refuses to overwrite a journal, to resume it for another question or with other settings, and each method’s journal with the other method', async () => {
    const server = await startOpenAIServer({ completions: (body) => script(String(body.prompt)) });
    try {
      const out = join(dir, 'kept.infmem.jsonl');
      const first = await read(server, ['-q', Q1, '--early-stop', '1', '--out', out]);
      expect(first.code, first.stderr).toBe(0);
      const refusals: [string[], RegExp][] = [
        [['-q', Q1], /already holds a read\. Continue it with --resume, start over with --force, or choose another --out\./],
        [['-q', Q2, '--resume'], /reads for another question \("Where was the logbook kept\?"\)\. Drop --question to continue it/],
        [['--resume', '--early-stop', '3'], /was read with --early-stop 1; a resume keeps it\. Drop --early-stop, or start over with --force\./],
        [['--resume', '--thinking', 'off'], /was read with --thinking on; a resume keeps it/],
        [['--resume', '--chat', 'qwen2.5'], /was read in Qwen3's chat text; a resume keeps it\. Drop --chat/],
      ];
      for (const [args, message] of refusals) await expect(read(server, [...args, '--out', out])).rejects.toThrow(message);
      const memagentJournal = join(dir, 'memagent.jsonl');
      writeFileSync(memagentJournal, `${JSON.stringify({ type: 'memagent-read', version: 2 })}\n`);
      await expect(read(server, ['--resume', '--out', memagentJournal])).rejects.toThrow(
        /holds a read by MemAgent's method: resume it without --method infmem/,
      );
      await expect(read(server, ['--resume', '--out', join(dir, 'none.jsonl')])).rejects.toThrow(/--resume has no journal to continue/);
      // MemAgent's read, given this journal, names the flag that continues it.
      const memagent = await runCli(['read', book, '--engine', 'extractive', '--out', out, '--resume']);
      expect(memagent.code).toBe(2);
      expect(memagent.stderr).toContain(`${out} holds a read by InfMem's method: resume it with --method infmem.`);
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('memagent read --method infmem with several questions', () => {
  it('reads each question on its own planner, stopping each where a read of it alone stops, and prints the answers in order', async () => {
    const server = await startOpenAIServer({ completions: (body) => script(String(body.prompt)) });
    try {
      const alone: Record<string, { prompt: string; max_tokens: unknown }[]> = {};
      const stdout: Record<string, string> = {};
      for (const q of [Q1, Q2]) {
        const from = server.completionBodies.length;
        const r = await read(server, ['-q', q, '--early-stop', '1', '--out', join(dir, `alone-${q.length}.infmem.jsonl`)]);
        expect(r.code, r.stderr).toBe(0);
        alone[q] = sentSince(server, from);
        stdout[q] = r.stdout;
      }
      const out = join(dir, 'two.infmem.jsonl');
      const from = server.completionBodies.length;
      const both = await read(server, ['-q', Q1, '-q', Q2, '--early-stop', '1', '--out', out]);
      expect(both.code, both.stderr).toBe(0);
      expect(both.stdout).toBe(`Question 1: ${Q1}\n${stdout[Q1]}\nQuestion 2: ${Q2}\n${stdout[Q2]}`);
      // Q1 votes before chunk 2, Q2 before chunk 3: each stops on its own votes.
      expect(both.stderr).toContain('q1: Stopped before chunk 2: 1 votes in a row.');
      expect(both.stderr).toContain('q2: Stopped before chunk 3: 1 votes in a row.');
      // Each question's requests are those of a read of it alone, in its order, whatever the interleaving.
      const sent = sentSince(server, from);
      for (const q of [Q1, Q2]) expect(sent.filter((s) => kind(s.prompt).question === q)).toEqual(alone[q]);
      for (const [n, q, chunks] of [
        [1, Q1, 1],
        [2, Q2, 2],
      ] as const) {
        const path = join(dir, `two.q${n}.infmem.jsonl`);
        const lines = journal(path);
        expect(lines[0]).toMatchObject({ type: 'memagent-infmem-read', question: q });
        expect(lines.filter((l) => l.type === 'revision')).toHaveLength(chunks);
        expect(lines.at(-1)).toMatchObject({ type: 'answer', step: chunks + 1 });
      }
      expect(existsSync(out)).toBe(false);

      // --json: one line per question, with its sources; a resume of the finished journals prints them again without a request.
      const sources = { citations: expect.any(Array), unsourced: expect.any(Array) };
      const count = server.completionBodies.length;
      const again = await read(server, ['--out', out, '--resume', '--json']);
      expect(again.code, again.stderr).toBe(0);
      expect(server.completionBodies.length).toBe(count);
      expect(
        again.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as object),
      ).toEqual([
        { type: 'answer', question: Q1, answer: 'the archive', final: 'Therefore, the answer is the archive.', step: 2, chunks: expect.any(Number), sources },
        {
          type: 'answer',
          question: Q2,
          answer: 'the harbour master',
          final: 'Therefore, the answer is the harbour master.',
          step: 3,
          chunks: expect.any(Number),
          sources,
        },
      ]);
    } finally {
      await server.stop();
    }
  }, 180_000);
});

describe('memagent read --method infmem with several questions, stopped', () => {
  it('Ctrl-C stops every question with each journal saved, and --resume ends as the read never stopped', async () => {
    const { server, at } = await interruptibleServer();
    try {
      const ask = ['-q', Q1, '-q', Q2, '--early-stop', '2', '--in-flight', '1'];
      const whole = join(dir, 'never.infmem.jsonl');
      const never = await read(server, [...ask, '--out', whole]);
      expect(never.code, never.stderr).toBe(0);
      expect(never.stderr).toContain("At most 1 of the questions' requests are in flight at once (--in-flight); the others wait their turn.");
      const out = join(dir, 'halted.infmem.jsonl');
      // Stopped as Q2's planner is asked about chunk 3: Q2 has written two chunks, Q1 is wherever its turns took it.
      at.interruptAt = (prompt) => kind(prompt).question === Q2 && kind(prompt).role === 'planner' && kind(prompt).step === 3;
      const stopped = await read(server, [...ask, '--out', out]);
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(stopped.stderr).toMatch(
        /Stopped\. Saved: .*q2: 2 of \d+ chunks in .*halted\.q2\.infmem\.jsonl\. Run the same command with --resume to continue\./,
      );
      expect(story(journal(join(dir, 'halted.q2.infmem.jsonl')))).toEqual(story(journal(join(dir, 'never.q2.infmem.jsonl'))).slice(0, 2));
      // Without the questions, the resume takes them from the journals.
      const resumed = await read(server, ['--out', out, '--resume']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('q2: Resuming at chunk 3 of ');
      expect(resumed.stdout).toBe(never.stdout);
      for (const n of [1, 2]) expect(story(journal(join(dir, `halted.q${n}.infmem.jsonl`)))).toEqual(story(journal(join(dir, `never.q${n}.infmem.jsonl`))));
    } finally {
      await server.stop();
    }
  }, 180_000);
});

describe('--in-flight with several questions', () => {
  it('sends at most N requests at once, the others in the order they came, and a request stopped while it waits is never sent', async () => {
    const started: { request: CompletionRequest; answer: (r: CompletionResult) => void }[] = [];
    const limited = atMost({ complete: (request) => new Promise((answer) => started.push({ request, answer })) }, 2);
    const ask = (prompt: string, signal?: AbortSignal) => limited.complete({ prompt, maxTokens: 1, temperature: 0, topP: 1, ...(signal && { signal }) });
    const stop = new AbortController();
    const replies = [ask('a'), ask('b'), ask('c', stop.signal), ask('d')];
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await turn();
    expect(started.map((s) => s.request.prompt)).toEqual(['a', 'b']);
    stop.abort();
    await expect(replies[2]).rejects.toSatisfy(isAbortError);
    started[0]!.answer({ text: 'A' });
    await expect(replies[0]).resolves.toEqual({ text: 'A' });
    await turn();
    expect(started.map((s) => s.request.prompt)).toEqual(['a', 'b', 'd']);
    started[1]!.answer({ text: 'B' });
    started[2]!.answer({ text: 'D' });
    await expect(Promise.all([replies[1], replies[3]])).resolves.toEqual([{ text: 'B' }, { text: 'D' }]);
  });
});

describe('memagent read --method infmem --chat', () => {
  it("qwen2.5 renders each request in Qwen2.5's chat text: its default system message where there is none, no empty thought with thinking off", async () => {
    const server = await startOpenAIServer({ completions: (body) => flatScript(String(body.prompt)) });
    try {
      const asked = ['-q', Q1, '--early-stop', '1', '--force'];
      for (const thinking of ['on', 'off']) {
        const from = server.completionBodies.length;
        const qwen3 = await read(server, [...asked, '--thinking', thinking, '--out', join(dir, 'qwen3.jsonl')]);
        const middle = server.completionBodies.length;
        const qwen25 = await read(server, [...asked, '--thinking', thinking, '--out', join(dir, 'qwen25.jsonl'), '--chat', 'qwen2.5']);
        expect([qwen3.code, qwen25.code], qwen25.stderr).toEqual([0, 0]);
        expect(qwen3.stderr).toContain('Qwen3 chat text');
        expect(qwen25.stderr).toContain('Qwen2.5 chat text');
        const three = sentSince(server, from).slice(0, middle - from);
        const two5 = sentSince(server, middle);
        expect(two5.length).toBe(three.length);
        const system = `<|im_start|>system\n${QWEN25_DEFAULT_SYSTEM}<|im_end|>\n`;
        three.forEach((r, i) => {
          // Qwen3's template writes an empty thought where thinking is off; Qwen2.5's has none to write.
          const bare = thinking === 'off' ? r.prompt.replace(/<think>\n\n<\/think>\n\n$/, '') : r.prompt;
          if (thinking === 'off') expect(bare).not.toBe(r.prompt);
          // The planner's request carries its own system message (the tool); the others get Qwen2.5's default.
          expect(two5[i]!.prompt).toBe(bare.startsWith('<|im_start|>system\n') ? bare : system + bare);
        });
        expect(two5.some((r) => r.prompt.startsWith(system))).toBe(true);
        expect(journal(join(dir, 'qwen25.jsonl'))[0]).toMatchObject({ chat: { family: 'qwen2.5', defaultSystem: QWEN25_DEFAULT_SYSTEM } });
      }
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('is refused where no server renders the requests, and for a family it does not know', async () => {
    const refused = (args: string[]) => readInfmemCommand([book, '--method', 'infmem', '-q', Q1, ...args], () => 0, {});
    await expect(refused(['--engine', 'webllm', '--chat', 'qwen2.5'])).rejects.toThrow(
      /--chat is for a server: with --engine webllm the chat text is the model's own/,
    );
    await expect(refused(['--engine', 'extractive', '--chat', 'qwen3'])).rejects.toThrow(/--chat is for a server: the extractive engine renders no chat text/);
    await expect(refused(['--base-url', 'http://127.0.0.1:9/v1', '--chat', 'llama'])).rejects.toThrow(
      /--chat is qwen3 \(the default.*\) or qwen2\.5, not "llama"/,
    );
  });
});
