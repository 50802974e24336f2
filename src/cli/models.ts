/**
 * `memagent models`: the WebLLM models in the cache folder (--engine webllm
 * downloads there). Lists them with what is downloaded, downloads one ahead
 * of a read (to read later with no network), and deletes one.
 *
 *   memagent models [--cache-dir DIR]
 *   memagent models download [--model ID | --model-url URL --model-lib URL] [--webllm VERSION]
 *   memagent models delete ID [--webllm VERSION]
 */
import { deleteModelFiles, modelCacheState } from '../engines/webllm/models/model-download';
import { formatBytes } from '../engines/webllm/models/model-fetch';
import { FileCaches } from '../engines/webllm/node/file-caches';
import { webllmVersion } from '../engines/webllm/versions';
import { parseFlags, UsageError } from './flags';
import { cacheDirOf, type CachedModel, entryOf, ModelList, openGpuEngine } from './gpu-engine';

export const MODELS_HELP = `memagent models: the WebLLM models kept for --engine webllm.

  memagent models [--cache-dir DIR]                     list them, with what is downloaded
  memagent models download [--model ID] [--cache-dir DIR]
  memagent models download --model-url URL --model-lib URL [--model NAME] [--context N]
                                                        download one now, to read later with no network
  memagent models delete ID [--webllm VERSION] [--cache-dir DIR]
                                                        delete its files (a library another model uses stays)
Downloads resume where they stopped. --webllm 0.2.79 fetches a model for the v0_2_48 libraries.
`;

function describe(m: CachedModel, state: Awaited<ReturnType<typeof modelCacheState>>): string {
  const size = state.bytesTotal === undefined ? 'size not known yet' : formatBytes(state.bytesTotal);
  const held = state.complete ? 'downloaded' : state.partial ? `partly downloaded (${formatBytes(state.bytesCached)} of ${size})` : 'not downloaded';
  return `${m.id}  ${state.complete ? size : ''}${state.complete ? ', ' : ''}${held}; WebLLM ${m.webllm}\n    files ${m.modelUrl}\n    library ${m.libUrl}`;
}

export async function modelsCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseFlags(argv, {});
  const [action, ...rest] = positionals;
  if (v.help) {
    process.stdout.write(MODELS_HELP);
    return 0;
  }
  const dir = cacheDirOf(v);
  const list = new ModelList(dir);
  const caches = new FileCaches(dir).asCacheStorage();
  const state = (m: CachedModel) => modelCacheState(entryOf(m), { caches, webllm: webllmVersion(m.webllm) });

  if (action === undefined || action === 'list') {
    const models = list.all();
    if (!models.length) {
      process.stdout.write(`No models in ${dir} yet: memagent read … --engine webllm, or memagent models download, fetches one.\n`);
      return 0;
    }
    process.stdout.write(`Models in ${dir}:\n`);
    for (const m of models) process.stdout.write(`  ${describe(m, await state(m))}\n`);
    return 0;
  }

  if (action === 'download') {
    const say = (line: string) => process.stderr.write(`${line}\n`);
    const engine = await openGpuEngine({ ...v, ...(v.model === undefined && rest[0] !== undefined && { model: rest[0] }) }, say);
    process.stdout.write(`${engine.model.id} is downloaded to ${dir}; it loads from there with no network.\n`);
    return 0;
  }

  if (action === 'delete') {
    const id = rest[0] ?? v.model;
    if (!id) throw new UsageError('Name the model to delete: memagent models delete ID (memagent models lists them).');
    // A model converted elsewhere is named by its label, with or without the custom: its id carries.
    const matching = list.all().filter((m) => (m.id === id || m.id === `custom:${id}`) && (v.webllm === undefined || m.webllm === v.webllm));
    if (!matching.length) throw new UsageError(`There is no model "${id}" in ${dir}${v.webllm ? ` for WebLLM ${v.webllm}` : ''}: memagent models lists them.`);
    if (matching.length > 1) throw new UsageError(`"${id}" is kept for WebLLM ${matching.map((m) => m.webllm).join(' and ')}: add --webllm VERSION.`);
    const model = matching[0]!;
    const others = list.all().filter((m) => !(m.id === model.id && m.webllm === model.webllm) && m.libUrl === model.libUrl);
    // A library two models share (Qwen2.5-7B and a converted RL-MemAgent-7B) stays while the other is kept.
    const keepLib = (await Promise.all(others.map(state))).some((s) => s.partial);
    const removed = await deleteModelFiles(entryOf(model), { caches, keepLib });
    list.forget(model);
    process.stdout.write(`Deleted ${model.id} (${removed} files)${keepLib ? '; its library stays, another model uses it' : ''}.\n`);
    return 0;
  }
  throw new UsageError(`Unknown action "${action}": memagent models [list | download | delete ID].`);
}
