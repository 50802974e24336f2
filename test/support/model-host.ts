import type { AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { CDN_PRESETS, type CdnPreset, cdnDigests, handleCdn, type LogEntry, prepareCdn } from './cdn-host';
import { BROKEN_LIBRARY, chatConfig, shardBytes, shardName, tokenizerJson, weightsIndex } from './model-files';
import { serveSynthetic } from './synthetic-model';

/**
 * Stand-ins for the model hosts WebLLM fetches from, on one port.
 *
 * The polite host, /m/<variant>/resolve/main/<file> and /lib/<name>.wasm:
 * plain bodies with a true Content-Length, no redirects, no ranges, with
 * faults on demand. Variants: `good`; `held` (after POST /__hold, every
 * shard but the first waits unanswered until POST /__release: a download the
 * test catches half done, however fast the machine); `missing` (one shard
 * answers 404); `drop` (one shard's connection drops half-way until POST /__heal).
 *
 * The realistic host, /r/<preset>/… and /cdn/<preset>/…: see cdn-host.ts.
 *
 * GET /__log lists requests, POST /__reset clears the log, the heal, the hold and
 * the realistic host's faults; GET /__files/<preset> gives the SHA-256 of every
 * file of a realistic preset as served before compression.
 */

export const SHARDS = 4;
export const SHARD_BYTES = 1024 * 1024;
/** Bytes a shard sends before each pause: slow enough to watch a progress bar move. */
const SLICE = 128 * 1024;
const PAUSE_MS = 25;

export interface HostState {
  log: LogEntry[];
  healed: boolean;
  played: Set<string>;
  /** The `held` variant's waiting shards, while a hold is on (null when off). */
  held: (() => void)[] | null;
}

function release(state: HostState): void {
  for (const go of state.held?.splice(0) ?? []) go();
  state.held = null;
}

function cors(res: ServerResponse): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', '*');
  res.setHeader('Access-Control-Expose-Headers', 'Content-Length');
}

async function sendSlowly(res: ServerResponse, body: Buffer, entry: LogEntry, dropAt?: number): Promise<void> {
  entry.status = 200; // known now, while the body is still going out
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length) });
  for (let at = 0; at < body.length; at += SLICE) {
    if (dropAt !== undefined && at >= dropAt) {
      res.socket?.destroy(); // the connection drops mid-body
      return;
    }
    res.write(body.subarray(at, at + SLICE));
    entry.served += Math.min(SLICE, body.length - at);
    await new Promise((r) => setTimeout(r, PAUSE_MS));
  }
  res.end();
}

export interface ModelHost {
  server: Server;
  port: number;
  state: HostState;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 and, where the machine has it, ::1, so that both loopback names reach it. */
export async function startModelHost(port: number, presets: Record<string, CdnPreset> = CDN_PRESETS): Promise<ModelHost> {
  const state: HostState = { log: [], healed: false, played: new Set(), held: null };
  prepareCdn(presets);
  const shards = Array.from({ length: SHARDS }, (_, i) => shardBytes(i, SHARD_BYTES));
  const index = weightsIndex(SHARDS, SHARD_BYTES);

  const handle = async (req: IncomingMessage, res: ServerResponse, entry: LogEntry): Promise<number> => {
    const path = entry.path;
    if (path === '/__log') return (cors(res), res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(state.log)), 200);
    if (path === '/__reset') return (cors(res), (state.log = []), (state.healed = false), state.played.clear(), release(state), res.writeHead(204).end(), 204);
    if (path === '/__heal') return (cors(res), (state.healed = true), res.writeHead(204).end(), 204);
    if (path === '/__hold') return (cors(res), (state.held ??= []), res.writeHead(204).end(), 204);
    if (path === '/__release') return (cors(res), release(state), res.writeHead(204).end(), 204);
    const digests = /^\/__files\/([\w-]+)$/.exec(path);
    if (digests) {
      const preset = presets[digests[1]!];
      cors(res);
      return preset
        ? (res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(cdnDigests(preset))), 200)
        : (res.writeHead(404).end(), 404);
    }
    const realistic = await handleCdn(req, res, state, entry, presets);
    if (realistic !== undefined) return realistic;

    cors(res);
    if (req.method === 'OPTIONS') return (res.writeHead(204).end(), 204);
    const synthetic = serveSynthetic(req, res, path); // a model made from a real model library (synthetic-model.ts)
    if (synthetic !== undefined) return synthetic;
    if (path.startsWith('/lib/') && path.endsWith('.wasm')) {
      // Starts like WebAssembly, then is not: the model library fails to compile, as a wrong or corrupt download would.
      return (res.writeHead(200, { 'Content-Type': 'application/wasm', 'Content-Length': String(BROKEN_LIBRARY.length) }).end(BROKEN_LIBRARY), 200);
    }
    const m = /^\/m\/(good|held|missing|drop)\/resolve\/main\/(.+)$/.exec(path);
    if (!m) return (res.writeHead(404).end('not found'), 404);
    const [, variant, file] = m as unknown as [string, string, string];
    const json = (v: unknown) => {
      const body = Buffer.from(JSON.stringify(v));
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(body.length) }).end(body);
      entry.served = body.length;
      return 200;
    };
    if (file === 'mlc-chat-config.json') return json(chatConfig);
    if (file === 'tensor-cache.json') return json(index);
    if (file === 'tokenizer.json')
      return (res.writeHead(200, { 'Content-Type': 'application/json' }).end(tokenizerJson()), (entry.served = tokenizerJson().length), 200);
    const shard = /^params_shard_(\d+)\.bin$/.exec(file);
    const i = shard ? Number(shard[1]) : -1;
    if (!shards[i] || file !== shardName(i)) return (res.writeHead(404).end('not found'), 404);
    if (variant === 'missing' && i === 1) return (res.writeHead(404).end('not found'), 404);
    if (req.method === 'HEAD') return (res.writeHead(200, { 'Content-Length': String(SHARD_BYTES) }).end(), 200);
    if (variant === 'held' && i > 0 && state.held) await new Promise<void>((resolve) => state.held!.push(resolve));
    if (res.destroyed) return 0; // the page went away while the shard was held
    await sendSlowly(res, shards[i], entry, variant === 'drop' && i === 2 && !state.healed ? SHARD_BYTES / 2 : undefined);
    return 200;
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const entry: LogEntry = { method: req.method ?? 'GET', host: 'hub', path: new URL(req.url ?? '/', 'http://host').pathname, status: 0, served: 0 };
    if (!entry.path.startsWith('/__')) state.log.push(entry);
    handle(req, res, entry).then(
      (status) => (entry.status = status),
      () => res.destroy(),
    );
  };
  const server = createServer(onRequest);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  const v6 = createServer(onRequest);
  const hasV6 = await new Promise<boolean>((resolve) => {
    v6.once('error', () => resolve(false));
    v6.listen(bound, '::1', () => resolve(true));
  });
  const close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    if (hasV6) {
      v6.closeAllConnections();
      await new Promise((r) => v6.close(r));
    }
  };
  return { server, port: bound, state, close };
}
