import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { InfmemFileId, InfmemFileSpec } from '../src/core/infmem/official-files';
import { InfmemFileLibrary } from '../src/runs/infmem-files';
import { Store } from '../src/storage/db';
import { FNCALL_STANDIN, INFMEM_STANDIN, standinPrompts } from './support/infmem-standins';

let specs: Record<InfmemFileId, InfmemFileSpec>;
let expected: Awaited<ReturnType<typeof standinPrompts>>;
beforeAll(async () => {
  expected = await standinPrompts();
  specs = expected.specs;
});

const openStore = () => Store.open(`memagent-infmem-files-${crypto.randomUUID()}`);
const INFMEM_RAW = 'https://raw.githubusercontent.com/UCMP13753/InfMem/4f4de32311bfff8e8847664705301076b6d61453/taskutils/memory_eval/utils/infmem.py';
const FNCALL_RAW =
  'https://raw.githubusercontent.com/QwenLM/Qwen-Agent/31a4d36d123688581a9e9744427272b33ce940e0/qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py';

/** A host that serves `files` by full URL and records what was asked; anything else is a 404. */
function host(files: Record<string, Uint8Array>) {
  const asked: string[] = [];
  const fetch = (async (input: string | URL | Request) => {
    asked.push(String(input));
    const body = files[String(input)];
    return body ? new Response(body.slice()) : new Response('Not Found', { status: 404 });
  }) as typeof globalThis.fetch;
  return { fetch, asked };
}

const offline = (async () => {
  throw new TypeError('Failed to fetch');
}) as unknown as typeof fetch;

describe("InfMem's pinned files in the browser", () => {
  it('fetches both from their pinned commits, keeps them, and reads with them offline after a reload', async () => {
    const store = await openStore();
    const raw = host({ [INFMEM_RAW]: INFMEM_STANDIN, [FNCALL_RAW]: FNCALL_STANDIN });
    const prompts = await new InfmemFileLibrary(store, { specs, fetch: raw.fetch }).prompts();
    expect(raw.asked).toEqual([INFMEM_RAW, FNCALL_RAW]);
    expect(prompts.templates).toEqual(expected.templates);
    expect(prompts.toolSystem).toBe(expected.toolSystem);
    const later = new InfmemFileLibrary(store, { specs, fetch: offline });
    expect((await later.prompts()).toolSystem).toBe(expected.toolSystem);
    expect((await later.status()).map((s) => [s.id, s.have, s.source])).toEqual([
      ['infmem', true, INFMEM_RAW],
      ['fncall', true, FNCALL_RAW],
    ]);
  });

  it('fetches from a mirror that serves <base>/<path>, and refuses an address that is not http(s)', async () => {
    const store = await openStore();
    const mirror = host({
      [`https://mirror.example/infmem/${specs.infmem.path}`]: INFMEM_STANDIN,
      [`https://mirror.example/agent/${specs.fncall.path}`]: FNCALL_STANDIN,
    });
    const library = new InfmemFileLibrary(store, { specs, fetch: mirror.fetch });
    library.setBase('infmem', 'https://mirror.example/infmem/');
    library.setBase('fncall', 'https://mirror.example/agent');
    await library.prompts();
    expect(mirror.asked).toEqual([`https://mirror.example/infmem/${specs.infmem.path}`, `https://mirror.example/agent/${specs.fncall.path}`]);
    expect(() => library.setBase('fncall', 'ftp://mirror.example')).toThrow(/not an http:\/\/ or https:\/\/ address.*qwen_fncall_prompt\.py/);
  });

  it('imports a local copy known by its hash, and refuses any other file whole, keeping nothing', async () => {
    const store = await openStore();
    const library = new InfmemFileLibrary(store, { specs, fetch: offline });
    await expect(library.import('notes.py', new TextEncoder().encode('PROMPT = "mine"\n'))).rejects.toThrow(
      /"notes\.py" was refused: its SHA-256 is [0-9a-f]{64}, which is not that of infmem\.py .* or qwen_fncall_prompt\.py .*Nothing of it was used or kept/,
    );
    expect((await library.status()).every((s) => !s.have)).toBe(true);
    expect(await library.import('infmem.py', INFMEM_STANDIN)).toBe('infmem');
    expect(await library.import('fncall.py', FNCALL_STANDIN)).toBe('fncall');
    expect((await library.status()).map((s) => s.source)).toEqual(['imported infmem.py', 'imported fncall.py']);
    expect((await library.prompts()).toolSystem).toBe(expected.toolSystem);
  });

  it('says how to get a file it cannot fetch, and remembers why for the settings', async () => {
    const library = new InfmemFileLibrary(await openStore(), { specs, fetch: offline });
    await expect(library.prompts()).rejects.toThrow(
      /infmem\.py could not be fetched \(Failed to fetch\)\. InfMem reads with its official prompts, which the app does not ship: go online, set a mirror, or download .* and import it/,
    );
    expect((await library.status())[0]).toMatchObject({ id: 'infmem', have: false, error: expect.stringMatching(/could not be fetched/) });
  });

  it('fetches again a kept copy that is not the pinned one', async () => {
    const store = await openStore();
    await store.putPromptFile({ path: specs.infmem.path, sha256: specs.infmem.sha256, bytes: new Uint8Array([1, 2, 3]).buffer, source: 'old', savedAt: 1 });
    const raw = host({ [INFMEM_RAW]: INFMEM_STANDIN, [FNCALL_RAW]: FNCALL_STANDIN });
    await new InfmemFileLibrary(store, { specs, fetch: raw.fetch }).prompts();
    expect(raw.asked).toEqual([INFMEM_RAW, FNCALL_RAW]);
  });
});
