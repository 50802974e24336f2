// A bundle's entry (the GPU benchmark's and its peer's): unpacks what the bundle's build compressed, with node's own
// zlib so that nothing else is needed, once, then runs the bundled script the manifest names. Plain JavaScript on
// node's built-in modules only.
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliDecompressSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8'));
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

function writable(dir) {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function put(target, bytes) {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(`${target}.tmp`, bytes);
  renameSync(`${target}.tmp`, target);
}

const id = sha256(JSON.stringify(manifest)).slice(0, 12);
const dir = writable(join(here, 'unpacked')) ? join(here, 'unpacked') : join(tmpdir(), `memagent-gpu-bundle-${id}`);
mkdirSync(dir, { recursive: true });
for (const [name, file] of Object.entries(manifest.files)) {
  const target = join(dir, name);
  if (existsSync(target) && sha256(readFileSync(target)) === file.sha256) continue;
  const bytes = brotliDecompressSync(readFileSync(join(here, `${name}.br`)));
  if (sha256(bytes) !== file.sha256) throw new Error(`${name}.br is damaged: copy the bundle again.`);
  put(target, bytes);
}
// The peer's node-llama-cpp and the packages it needs, as installed: one archive of many files (its layout: peer/bundle.ts).
if (manifest.modules) {
  const done = join(dir, 'node_modules', '.unpacked');
  if (!existsSync(done) || readFileSync(done, 'utf8') !== manifest.modules.sha256) {
    const pack = brotliDecompressSync(readFileSync(join(here, 'node_modules.pack.br')));
    if (sha256(pack) !== manifest.modules.sha256) throw new Error('node_modules.pack.br is damaged: copy the bundle again.');
    const indexLength = pack.readUInt32LE(0);
    let at = 4 + indexLength;
    for (const entry of JSON.parse(pack.subarray(4, at).toString('utf8'))) {
      put(join(dir, 'node_modules', entry.path), pack.subarray(at, at + entry.bytes));
      at += entry.bytes;
    }
    writeFileSync(done, manifest.modules.sha256);
  }
}
writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
await import(pathToFileURL(join(dir, manifest.entry)).href);
