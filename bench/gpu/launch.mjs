// The bundle's entry: unpacks what bundle.ts compressed (with node's own zlib, so nothing else is needed),
// once, then runs the benchmark. Plain JavaScript on node's built-in modules only.
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliDecompressSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8'));

function writable(dir) {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

const id = createHash('sha256').update(JSON.stringify(manifest)).digest('hex').slice(0, 12);
const dir = writable(join(here, 'unpacked')) ? join(here, 'unpacked') : join(tmpdir(), `memagent-gpu-bench-${id}`);
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
for (const [name, file] of Object.entries(manifest.files)) {
  const target = join(dir, name);
  if (existsSync(target) && createHash('sha256').update(readFileSync(target)).digest('hex') === file.sha256) continue;
  const bytes = brotliDecompressSync(readFileSync(join(here, `${name}.br`)));
  if (createHash('sha256').update(bytes).digest('hex') !== file.sha256) throw new Error(`${name}.br is damaged: copy the bundle again.`);
  writeFileSync(`${target}.tmp`, bytes);
  renameSync(`${target}.tmp`, target);
}
await import(pathToFileURL(join(dir, 'bench.mjs')).href);
