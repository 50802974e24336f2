/**
 * A model download through the realistic test host (Hugging Face-like hub,
 * redirect to a CDN on another origin, throttled connections) where every
 * shard's connection drops once at 60 %: bytes fetched ÷ bytes of the model,
 * resuming with Range against starting the shard over (the baseline: the same
 * CDN without byte ranges).
 */
import { downloadModel } from '../src/engines/webllm/models/model-download';
import type { CdnPreset } from '../test/support/cdn-host';
import { FakeCaches } from '../test/support/fake-caches';
import { startModelHost } from '../test/support/model-host';

const MiB = 1024 * 1024;
const SHARDS = 4;
const SHARD_BYTES = 16 * MiB;
const RATE = 32 * MiB;

function preset(ranges: boolean): CdnPreset {
  return { shards: SHARDS, shardBytes: SHARD_BYTES, ranges, bytesPerSecond: RATE, ttlMs: 60_000, dropOnce: 'all', busyOnce: [], stallOnce: [] };
}

export async function downloadBench(): Promise<void> {
  const host = await startModelHost(0, { 'bench-plain': preset(false), 'bench-ranges': preset(true) });
  const total = SHARDS * SHARD_BYTES;
  try {
    const measure = async (name: string) => {
      host.state.log = [];
      host.state.played.clear();
      const hub = `http://127.0.0.1:${host.port}/r/${name}`;
      const t0 = performance.now();
      const result = await downloadModel(
        { modelUrl: `${hub}/resolve/main/`, libUrl: `${hub}/lib/bench.wasm` },
        { caches: new FakeCaches().asCacheStorage(), estimate: async () => ({}), online: () => true },
      );
      const ms = performance.now() - t0;
      const served = host.state.log.filter((e) => e.host === 'cdn').reduce((n, e) => n + e.served, 0);
      if (result.bytesFetched !== served) throw new Error(`the downloader counted ${result.bytesFetched} bytes, the host served ${served}`);
      return { ratio: served / total, ms };
    };
    const baseline = await measure('bench-plain');
    const ranges = await measure('bench-ranges');
    const line = (label: string, what: string, r: { ratio: number; ms: number }, extra = '') =>
      console.log(`  ${label.padEnd(9)} ${what.padEnd(30)} ${r.ratio.toFixed(2)} x the model fetched  ${r.ms.toFixed(0).padStart(6)} ms${extra}`);
    console.log(
      `Model download: ${total / MiB} MiB in ${SHARDS} shards via redirect to a CDN, ${RATE / MiB} MiB/s per connection, each shard dropped once at 60 %`,
    );
    line('baseline', 'no ranges: shard starts over', baseline);
    line('ranges', 'resume with Range: bytes=N-', ranges, `  (target <= 1.10; ${(baseline.ratio / ranges.ratio).toFixed(2)}x fewer bytes than baseline)`);
  } finally {
    await host.close();
  }
}
