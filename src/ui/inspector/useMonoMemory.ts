import { useCallback, useState } from 'react';

const KEY = 'memagent.monoMemory';

/** Whether memories show in the monospace face; the choice is kept in this browser. */
export function useMonoMemory(): [boolean, (on: boolean) => void] {
  const [on, setOn] = useState(() => localStorage.getItem(KEY) === 'true');
  const set = useCallback((next: boolean) => {
    localStorage.setItem(KEY, String(next));
    setOn(next);
  }, []);
  return [on, set];
}
