/**
 * Runs one fuzz case at a time for test/fuzz-ingest.test.ts (ingest, then the
 * token count an import makes), in a thread of its own: a case that never
 * ends blocks only this thread, which the test terminates when its time is up.
 */
import { parentPort } from 'node:worker_threads';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { IngestError, ingestBytes, type IngestedText } from '../src/ingest/ingest';

export interface FuzzRequest {
  id: number;
  name: string;
  bytes: Uint8Array<ArrayBuffer>;
  maxUnzippedBytes?: number;
}

export interface FuzzReply {
  id: number;
  /** A document that passed the checks, a refusal with a message, or anything else (a failure of the test). */
  outcome: 'document' | 'refused' | 'failed';
  message: string;
  ms: number;
}

const FORMATS = new Set(['text', 'markdown', 'html', 'epub', 'pdf', 'docx']);
const KINDS = new Set(['chapter', 'heading', 'page']);

/** What is wrong with a document ingest returned, or null. */
function problem(doc: IngestedText, bytes: number): string | null {
  if (typeof doc.text !== 'string' || !/\S/.test(doc.text)) return 'the text is empty';
  if (!FORMATS.has(doc.format)) return `unknown format ${doc.format}`;
  if (!/^[0-9a-f]{64}$/.test(doc.hash)) return 'the hash is not SHA-256 hex';
  if (doc.bytes !== bytes) return `bytes ${doc.bytes}, not ${bytes}`;
  if (typeof doc.encoding !== 'string' || !doc.encoding) return 'no encoding';
  let last = 0;
  for (const a of doc.anchors) {
    if (!Number.isInteger(a.at) || a.at < 0 || a.at > doc.text.length) return `anchor at ${a.at} outside 0..${doc.text.length}`;
    if (a.at < last) return 'anchors out of order';
    if (!KINDS.has(a.kind) || typeof a.label !== 'string') return `malformed anchor ${JSON.stringify(a)}`;
    last = a.at;
  }
  return null;
}

parentPort!.on('message', async (req: FuzzRequest) => {
  const started = performance.now();
  const bytes = req.bytes.length;
  let reply: Omit<FuzzReply, 'id' | 'ms'>;
  try {
    const options = req.maxUnzippedBytes ? { maxUnzippedBytes: req.maxUnzippedBytes } : {};
    const doc = await ingestBytes(req.name, req.bytes, options);
    // An import also counts the document's tokens, so a text that stalls the tokenizer stalls the import.
    const tokens = (await loadQwenTokenizer()).count(doc.text);
    const wrong = problem(doc, bytes) ?? (tokens > 0 ? null : 'no tokens');
    reply = wrong ? { outcome: 'failed', message: `invalid document: ${wrong}` } : { outcome: 'document', message: '' };
  } catch (e) {
    if (e instanceof IngestError && e.name === 'IngestError' && e.message.trim().length > 10) {
      reply = { outcome: 'refused', message: e.message };
    } else {
      const err = e as Error;
      reply = { outcome: 'failed', message: `${err?.name ?? 'thrown'}: ${err?.message ?? String(e)}\n${err?.stack ?? ''}` };
    }
  }
  parentPort!.postMessage({ id: req.id, ...reply, ms: performance.now() - started } satisfies FuzzReply);
});
