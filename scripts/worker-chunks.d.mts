export interface EntryImport {
  /** The importing chunk, relative to the build folder. */
  chunk: string;
  /** The worker entry it imports. */
  imports: string;
}

export function findEntryImports(dist: string): Promise<{ entries: string[]; offences: EntryImport[] }>;
