/**
 * WebLLM's private state has one owner: driver/driver.ts and its batch part,
 * driver/driver-batch.ts (with versions.ts, which holds what differs between
 * WebLLM versions as data). Another file of the WebLLM engine that reads or
 * writes a private field of WebLLM's pipeline or engine fails here, named.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WEBLLM = join(ROOT, 'src/engines/webllm');
const OWNERS = new Set(['driver/driver.ts', 'driver/driver-batch.ts', 'versions.ts']);

/** Fields and methods of WebLLM's LLMChatPipeline and MLCEngine outside its public API. */
const PRIVATE = [
  'outputIds',
  'outputMessage',
  'stopTriggered',
  'appearedTokensFreq',
  'tokenLogprobArray',
  'filledKVCacheLength',
  'kvCache',
  'fKVCacheBeginForward',
  'fKVCacheEndForward',
  'getTokensEmbeddings',
  'prefillChunkSize',
  'contextWindowSize',
  'logitsOnCPU',
  'resetChat',
  'getInputData',
  'processNextToken',
  'loadedModelIdToPipeline',
];
const REACH = new RegExp(`\\.(${PRIVATE.join('|')})\\b`, 'g');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith('.ts') ? [path] : [];
  });
}

describe('WebLLM’s private state', () => {
  it('is read and written only by the driver (driver.ts and driver-batch.ts)', () => {
    const reaches = files(WEBLLM)
      .filter((path) => !OWNERS.has(relative(WEBLLM, path)))
      .flatMap((path) => [...readFileSync(path, 'utf8').matchAll(REACH)].map((m) => `${relative(ROOT, path)}: .${m[1]}`));
    expect(reaches).toEqual([]);
  });
});
