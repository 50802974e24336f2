import * as Comlink from 'comlink';
import { useCallback, useState } from 'react';
import type { DocumentRecord } from './data';
import { agent, call } from './client';

export interface ImportState {
  /** The file being imported and how far it is, or null when none is. */
  progress: { name: string; stage: string; fraction: number } | null;
  /** Cut Project Gutenberg's header and footer on import (remembered in this browser). */
  stripGutenberg: boolean;
  setStripGutenberg(on: boolean): void;
  /** Counts finished imports, so that views of the library know to reload. */
  version: number;
  /**
   * Imports a file; resolves once its whole text is stored. `onUsable` hears of
   * the document as soon as it can be read, while the rest of its text is written.
   */
  importFile(file: File, engineId: string, onUsable?: (doc: DocumentRecord) => void): Promise<DocumentRecord>;
}

const STRIP_KEY = 'memagent.stripGutenberg';

/** Imports run in the worker; the page only shows their progress. */
export function useImport(): ImportState {
  const [progress, setProgress] = useState<ImportState['progress']>(null);
  const [stripGutenberg, setStrip] = useState(() => localStorage.getItem(STRIP_KEY) !== 'false');
  const [version, setVersion] = useState(0);

  const setStripGutenberg = useCallback((on: boolean) => {
    localStorage.setItem(STRIP_KEY, String(on));
    setStrip(on);
  }, []);

  const importFile = useCallback(
    async (file: File, engineId: string, onUsable?: (doc: DocumentRecord) => void) => {
      setProgress({ name: file.name, stage: 'Reading the file', fraction: 0 });
      // Progress comes on a port of its own: a last report may land after the result.
      let finished = false;
      try {
        const onProgress = Comlink.proxy((p: { stage: string; fraction: number }) => {
          if (!finished) setProgress({ name: file.name, ...p });
        });
        const usable = Comlink.proxy((doc: DocumentRecord) => {
          if (finished) return;
          setVersion((v) => v + 1); // the Library lists it from now on
          onUsable?.(doc);
        });
        // The File goes to the worker as a handle: its bytes are read there, never in this tab.
        const doc = await call(agent.ingest({ file, engineId, stripGutenberg }, onProgress, usable));
        return doc;
      } finally {
        finished = true;
        setVersion((v) => v + 1);
        setProgress(null);
      }
    },
    [stripGutenberg],
  );

  return { progress, stripGutenberg, setStripGutenberg, version, importFile };
}
