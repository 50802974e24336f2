/**
 * `--peer`: after WebLLM's run, llama.cpp on the same machine with a made-up
 * GGUF at the same library's shapes, given the same requests (the same
 * prompt sizes, the same number of tokens written). Its figures and the
 * comparison go into the bench's record beside WebLLM's.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { libraryMetadata } from '../../../src/engines/webllm/models/library-metadata';
import { comparePeer, describeComparison, type PeerComparison, type WebLLMFigure } from './compare';
import { type PeerBackend, type PeerRecord, runLlamaPeer } from './llama-peer';
import { qwen2ShapeOf } from './qwen2-gguf';

/** Bumped when the GGUF the bench writes changes, so that a cached one is written again. */
const GGUF_REVISION = 1;

/** What the peer needs of a WebLLM run: its requests' figures and where its files are. */
export interface WebLLMRun {
  webllm: string;
  /** A software adapter (SwiftShader) is no GPU to share: llama.cpp then runs on its CPU build. */
  adapter?: { fallback: boolean };
  prompts: readonly WebLLMFigure[];
  step: WebLLMFigure;
}

export interface PeerRunOptions {
  library: string;
  tokenizer: string;
  text: string;
  cacheDir: string;
  /** The bench's JSON record, which gets `peer` and `peerComparison`. */
  out: string;
  backend?: PeerBackend;
  log(line: string): void;
}

/** The GGUF's place in the cache folder: one per model library (its content, not its name). */
export function peerGgufPath(cacheDir: string, library: Uint8Array): string {
  const id = createHash('sha256').update(library).digest('hex').slice(0, 16);
  return join(cacheDir, `llama-cpp-peer-${id}-r${GGUF_REVISION}-q4_0.gguf`);
}

export async function runPeerAfter(run: WebLLMRun, o: PeerRunOptions): Promise<{ peer: PeerRecord; comparison: PeerComparison; text: string }> {
  const library = new Uint8Array(readFileSync(o.library));
  const shape = qwen2ShapeOf(libraryMetadata(library));
  const peer = await runLlamaPeer({
    gguf: peerGgufPath(o.cacheDir, library),
    shape,
    tokenizer: o.tokenizer,
    text: o.text,
    step: { promptTokens: run.step.promptTokens, written: run.step.written },
    prompts: run.prompts.map((p) => ({ promptTokens: p.promptTokens, written: p.written })),
    backend: o.backend ?? (run.adapter?.fallback ? 'cpu' : 'auto'),
    log: o.log,
  });
  const comparison = comparePeer({ version: run.webllm, prompts: run.prompts, step: run.step }, peer);
  const record = JSON.parse(readFileSync(o.out, 'utf8')) as Record<string, unknown>;
  writeFileSync(o.out, `${JSON.stringify({ ...record, peer, peerComparison: comparison }, null, 2)}\n`);
  return { peer, comparison, text: describeComparison(comparison) };
}
