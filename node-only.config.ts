import type { Plugin } from 'vite';

/**
 * Packages built by Emscripten as one file for Node and the browser, with the
 * Node built-ins their Node branch imports. A browser never takes that branch,
 * so in the app's build those imports are an empty module: said here, rather
 * than left to Vite, which stubs them with a warning on every build.
 */
export const NODE_BRANCH_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  // Its Node branch: `await import('module')` for createRequire, then require('url') for fileURLToPath.
  '@mlc-ai/web-tokenizers': ['module', 'url'],
};

const EMPTY = '\0node-branch-only:';

/** Resolves the Node built-ins of NODE_BRANCH_IMPORTS, imported by those packages only, to an empty module. */
export function nodeBranchImports(packages = NODE_BRANCH_IMPORTS): Plugin {
  const owner = (importer: string | undefined) =>
    importer && Object.keys(packages).find((name) => importer.replaceAll('\\', '/').includes(`/node_modules/${name}/`));
  return {
    name: 'memagent:node-branch-imports',
    enforce: 'pre',
    resolveId(id, importer) {
      const name = owner(importer);
      const builtin = id.replace(/^node:/, '');
      return name && packages[name]!.includes(builtin) ? EMPTY + builtin : null;
    },
    load(id) {
      return id.startsWith(EMPTY) ? 'export default {};' : null;
    },
  };
}
