/**
 * WebLLM's bundle, loaded into node. The bundle is one self-contained ES
 * module written for browsers and workers; its Emscripten runtimes would take
 * node's code paths here, which break inside it (see EMSCRIPTEN_NODE_CHECK in
 * versions.ts). So the installed file is read, that one check is answered
 * "not node", and the result is imported from memory. A bundle of the GPU
 * benchmark does the same when it is built (bench/gpu/bundle.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { EMSCRIPTEN_NODE_CHECK, EMSCRIPTEN_RUNTIMES, type WebLLMVersion } from '../versions';
import type { MlcFactory } from '../driver/mlc';

/** The parts of a WebLLM module used outside the browser. */
export interface WebLLMModule {
  MLCEngine: new (config: Record<string, unknown>) => unknown;
  prebuiltAppConfig: { model_list: { model: string; model_id: string; model_lib: string; vram_required_MB?: number }[] };
}

/** WebLLM's bundle text made to run in node; throws for a bundle this adapter was not written for. */
export function patchForNode(source: string, version: string): string {
  const parts = source.split(EMSCRIPTEN_NODE_CHECK);
  if (parts.length - 1 !== EMSCRIPTEN_RUNTIMES) {
    throw new Error(
      `WebLLM ${version}'s bundle has ${parts.length - 1} Emscripten runtimes that check for node, not the ${EMSCRIPTEN_RUNTIMES} this adapter knows: it cannot run outside a browser until versions.ts is updated for it.`,
    );
  }
  // A source map comment would point into the package, which a module loaded from memory has not got.
  return parts.join('var ENVIRONMENT_IS_NODE=false').replace(/\n\/\/# sourceMappingURL=[^\n]*\s*$/, '\n');
}

const loaded = new Map<string, Promise<WebLLMModule>>();

export function importWebLLM(version: WebLLMVersion): Promise<WebLLMModule> {
  let m = loaded.get(version.version);
  if (!m) {
    const file = createRequire(import.meta.url).resolve(version.packageName);
    const source = patchForNode(readFileSync(file, 'utf8'), version.version);
    m = import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`) as Promise<WebLLMModule>;
    loaded.set(version.version, m);
  }
  return m;
}

/** MLCEngines of `version`, for a GpuSession. */
export function nodeMlcFactory(version: WebLLMVersion, load: (v: WebLLMVersion) => Promise<WebLLMModule> = importWebLLM): MlcFactory {
  return async (appConfig, onProgress) => {
    const { MLCEngine } = await load(version);
    return new MLCEngine({ appConfig, initProgressCallback: onProgress, logLevel: 'WARN' }) as Awaited<ReturnType<MlcFactory>>;
  };
}
