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
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { dawnAddonPath } from '../../src/engines/webllm/node/dawn';
import { patchForNode } from '../../src/engines/webllm/node/webllm-module';
import { WEBLLM_VERSIONS } from '../../src/engines/webllm/versions';
import { BundleFolder, parseBundleArgs, root } from './bundle-folder';

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

async function main(): Promise<number> {
  const args = parseBundleArgs('dist-gpu-bench');
  const { out, library, tokenizer } = args;
  const folder = new BundleFolder(args, 'bench.mjs');
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

  folder.put('bench.mjs', readFileSync(bundled));
  rmSync(bundled);
  folder.put('dawn.node', readFileSync(dawnAddonPath()));
  folder.put(basename(library), readFileSync(library));
  folder.put('tokenizer.json', readFileSync(tokenizer));
  const tokenizerConfig = join(tokenizer, '..', 'tokenizer_config.json');
  if (existsSync(tokenizerConfig)) folder.put('tokenizer_config.json', readFileSync(tokenizerConfig));
  folder.put('frankenstein.txt', readFileSync(root('data/haystack/frankenstein.txt')));
  const webllm = WEBLLM_VERSIONS.map((v) => v.version);
  return folder.finish({ library: basename(library), webllm }, `WebLLM ${webllm.join(' and ')}`);
}

process.exitCode = await main();
