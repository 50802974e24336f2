/**
 * A read of several questions on an engine that writes a step's requests in
 * one batch and says how many a batch holds: the batches keep to that size,
 * the reason is said once, and the answers are those of the questions alone.
 */
import { Writable } from 'node:stream';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Progress } from '../src/cli/progress';
import { readQuestions } from '../src/cli/read-questions';
import { readFiles } from '../src/cli/read-set';
import { readSettings } from '../src/core/plan';
import type { Engine } from '../src/engines/engine';
import { createEngine } from '../src/engines/registry';
import { prose } from './fixtures/documents';

const QUESTIONS = ['Where was the warden of Gull Rock born?', 'What colour is the lighthouse on Gull Rock?', 'Who built the bridge at Saltmarsh?'];
const FACTS = [
  'The warden of Gull Rock was born in Port Meridian.',
  'The lighthouse on Gull Rock is painted a deep red colour.',
  'The bridge at Saltmarsh was built by Ada Penhallow.',
];
const REASON = 'two sequences of this step fit in the memory the model leaves.';

const dir = mkdtempSync(join(tmpdir(), 'memagent-questions-batch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stream that keeps what is written to it. */
function kept(): Writable & { text(): string } {
  const parts: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      parts.push(String(chunk));
      done();
    },
  });
  return Object.assign(stream, { text: () => parts.join('') });
}

describe('memagent read with several questions on an engine that batches', () => {
  it('writes each step in batches of at most the engine’s batch size, says why once, and answers every question', async () => {
    const book = join(dir, 'gull-rock.txt');
    writeFileSync(book, [prose(1, 30), FACTS[0], prose(2, 40), FACTS[1], prose(3, 40), FACTS[2], prose(4, 30)].join('\n\n'));
    const extractive = await createEngine('extractive');
    const batches: number[] = [];
    const engine: Engine = {
      id: extractive.id,
      contextWindow: extractive.contextWindow,
      tokenizer: extractive.tokenizer,
      // A request alone is written as one (batchSender): a batch of one.
      generate: (messages, options) => {
        batches.push(1);
        return extractive.generate(messages, options);
      },
      generateBatch: (requests) => {
        batches.push(requests.length);
        return Promise.allSettled(requests.map((r) => extractive.generate(r.messages, r.options)));
      },
      batchLimit: () => Promise.resolve({ size: 2, reason: REASON }),
    };
    const stderr = kept();
    let stdout = '';
    const code = await readQuestions({
      v: {},
      file: book,
      out: join(dir, 'read.jsonl'),
      doc: await readFiles([book], { stripGutenberg: true }),
      settings: readSettings({ chunkTokens: 300, memoryTokens: 256 }),
      progress: new Progress('lines', stderr),
      questions: QUESTIONS,
      engine,
      write: (text) => (stdout += text),
    });
    expect(code).toBe(0);
    expect(stderr.text().split(REASON)).toHaveLength(2);
    expect(stderr.text()).toContain(`At most 2 questions are written in one batch: ${REASON}`);
    // Three questions, two a batch: every request of every step (the answers' too) went in a batch of at most two.
    const chunks = stderr
      .text()
      .split('\n')
      .filter((l) => l.startsWith('q1 chunk ')).length;
    expect(chunks).toBeGreaterThan(2);
    expect(Math.max(...batches)).toBe(2);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(3 * (chunks + 1));
    QUESTIONS.forEach((q, i) => expect(stdout).toMatch(new RegExp(`Question ${i + 1}: ${q.replace(/\?/g, '\\?')}\n[^\n]*${FACTS[i]}`)));
  });
});
