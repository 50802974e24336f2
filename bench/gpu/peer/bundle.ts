/**
 * `npm run bench:gpu:peer-bundle [-- --out DIR --library FILE --no-node]`:
 * the GPU benchmark's peer (llama.cpp through node-llama-cpp) as one folder
 * of its own, beside the GPU bundle (`npm run bench:gpu:bundle`), for a
 * machine with nothing but a GPU driver, a Vulkan loader and (optionally)
 * node. The two do not fit the size limit together.
 *
 *   run.sh, launch.mjs     start it (launch.mjs unpacks the rest with node's own zlib)
 *   peer.mjs.br            the peer's command, bundled
 *   node_modules.pack.br   node-llama-cpp and the packages it loads, as installed, with its prebuilt
 *                          binaries for this platform: the Vulkan build and the CPU one
 *   <library>.wasm.br      the WebLLM model library whose shapes the made-up GGUF takes
 *   tokenizer.json.br, frankenstein.txt.br
 *   node.xz                this node binary, where it fits in the size limit
 *
 * node_modules.pack is a uint32 (little-endian) length, that many bytes of
 * JSON listing `{ path, bytes }` under node_modules/, then each file's bytes
 * in that order. It fails if the folder comes to more than --limit-mib (60 MiB).
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { brotli, BundleFolder, parseBundleArgs, root, sha256 } from '../bundle-folder';

/** The folder of an installed package, as node would find it from `from`. */
function packageDir(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** node-llama-cpp and every package it depends on (not its optional binaries), as installed. */
function dependencyClosure(start: string): string[] {
  const seen = new Set<string>();
  const visit = (dir: string) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const name of Object.keys(pkg.dependencies ?? {})) {
      const found = packageDir(name, dir);
      if (!found) throw new Error(`${name}, which ${basename(dir)} needs, is not installed.`);
      visit(found);
    }
  };
  visit(start);
  return [...seen];
}

/** The prebuilt binaries for this platform: node-llama-cpp's own names for them. */
function binaryPackages(): string[] {
  const os = ({ linux: 'linux', darwin: 'mac', win32: 'win' } as Record<string, string>)[process.platform];
  const names = [`@node-llama-cpp/${os}-${process.arch}-vulkan`, `@node-llama-cpp/${os}-${process.arch}`];
  if (process.platform === 'darwin') names.push(`@node-llama-cpp/mac-${process.arch}-metal`);
  return names.filter((n) => existsSync(root(`node_modules/${n}/package.json`)));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? filesUnder(path) : e.isFile() ? [path] : [];
  });
}

/** The packages' files under node_modules/ as one archive; llama.cpp's source (for building it, never done here) left out. */
function modulesPack(dirs: string[]): { pack: Buffer; files: number } {
  const modules = root('node_modules');
  const files = dirs
    .flatMap(filesUnder)
    .filter((f) => !/[\\/]node-llama-cpp[\\/]llama[\\/]gitRelease\.bundle$/.test(f))
    .sort();
  const index = files.map((f) => ({ path: relative(modules, f).split('\\').join('/'), bytes: statSync(f).size }));
  const json = Buffer.from(JSON.stringify(index));
  const head = Buffer.alloc(4);
  head.writeUInt32LE(json.length);
  return { pack: Buffer.concat([head, json, ...files.map((f) => readFileSync(f))]), files: files.length };
}

async function main(): Promise<number> {
  const args = parseBundleArgs('dist-gpu-peer');
  const { out, library, tokenizer } = args;
  const binaries = binaryPackages();
  if (binaries.length === 0) throw new Error(`node-llama-cpp has no prebuilt binary installed for ${process.platform}-${process.arch}.`);
  const folder = new BundleFolder(args, 'peer.mjs');
  const bundled = join(out, 'peer.mjs');
  await build({
    entryPoints: [root('bench/gpu/peer/bundle-entry.ts')],
    outfile: bundled,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Loaded as installed, from node_modules/ beside the bundle: it finds its binaries by package name.
    external: ['node-llama-cpp', '@node-llama-cpp/*'],
    logLevel: 'warning',
    legalComments: 'none',
  });

  folder.put('peer.mjs', readFileSync(bundled));
  rmSync(bundled);
  folder.put(basename(library), readFileSync(library));
  folder.put('tokenizer.json', readFileSync(tokenizer));
  folder.put('frankenstein.txt', readFileSync(root('data/haystack/frankenstein.txt')));
  const nodeLlamaCpp = root('node_modules/node-llama-cpp');
  const { pack, files: packed } = modulesPack([...dependencyClosure(nodeLlamaCpp), ...binaries.map((b) => root(`node_modules/${b}`))]);
  // Quality 5: measured on llama.cpp's Vulkan library, 2 % larger than quality 9 and compressed in under half the time.
  writeFileSync(join(args.out, 'node_modules.pack.br'), brotli(pack, 5));
  const version = (JSON.parse(readFileSync(join(nodeLlamaCpp, 'package.json'), 'utf8')) as { version: string }).version;
  return folder.finish(
    { library: basename(library), nodeLlamaCpp: version, binaries, modules: { sha256: sha256(pack), bytes: pack.byteLength, files: packed } },
    `node-llama-cpp ${version} with ${binaries.join(', ')} (${packed} files)`,
  );
}

process.exitCode = await main();
