/**
 * Which WebLLM runtime measures a model library. Each runtime links only the
 * libraries built for it (see versions.ts): the library's folder in its path
 * says which, and where the path names no folder, the library's own imports
 * do. `--webllm` overrides the choice, but never into a runtime that cannot
 * link the library: that fails here, before any GPU work, naming the folders.
 */
import { basename } from 'node:path';
import {
  libraryFolders,
  versionForLibrary,
  versionForLibraryBytes,
  WEBLLM_0_2_79,
  WEBLLM_VERSIONS,
  webllmVersion,
  type WebLLMVersion,
} from '../../src/engines/webllm/versions';
import { BenchUsageError } from './options';

export function chooseRuntime(libraryPath: string, library: Uint8Array<ArrayBuffer>, asked?: string): WebLLMVersion {
  const wanted = asked === undefined ? undefined : webllmVersion(asked);
  if (asked !== undefined && !wanted) {
    throw new BenchUsageError(`--webllm ${asked} is not a WebLLM version this benchmark carries (${WEBLLM_VERSIONS.map((v) => v.version).join(' or ')}).`);
  }
  const built = versionForLibrary(libraryPath) ?? versionForLibraryBytes(library);
  if (wanted && built && wanted !== built) {
    throw new BenchUsageError(
      `${basename(libraryPath)} is a model library for WebLLM ${built.version} (from ${built.libraryFolder}/), so --webllm ${wanted.version} cannot run it: ` +
        `${libraryFolders()}. Give a library from ${wanted.libraryFolder}/, or leave out --webllm.`,
    );
  }
  return wanted ?? built ?? WEBLLM_0_2_79;
}
