import { useState } from 'react';
import { agent, call } from './client';
import { checkExportSize, type RunRecord } from './data';
import { runAlreadyHere } from './RunSearch';

/**
 * Importing an exported run: `imported` gets the new run's id; a file whose
 * run this browser already has leaves it as `alreadyHere`, for the Library to
 * link to; any other refusal goes to `setError`.
 */
export function useRunImport(imported: (id: string) => Promise<void>, setError: (message: string | null) => void) {
  const [alreadyHere, setAlreadyHere] = useState<RunRecord | null>(null);
  const importRun = async (file: File) => {
    setError(null);
    setAlreadyHere(null);
    let text = '';
    try {
      // A huge file is refused before it is read into this tab.
      checkExportSize(file.size);
      text = await file.text();
      await imported(await call(agent.importRun(text)));
    } catch (e) {
      const here = text ? await runAlreadyHere(text) : undefined;
      if (here) setAlreadyHere(here);
      else setError((e as Error).message);
    }
  };
  return { alreadyHere, importRun };
}
