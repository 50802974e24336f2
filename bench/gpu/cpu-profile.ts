/**
 * A V8 CPU profile of part of the run, through node:inspector: node refuses
 * `--cpu-prof` in NODE_OPTIONS, and the bundle starts node itself, so the
 * benchmark profiles itself. The file is the `.cpuprofile` JSON that Chrome's
 * DevTools and speedscope open.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { dirname } from 'node:path';

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err: Error | null, result?: unknown) => (err ? reject(err) : resolve(result as T))),
  );
}

/** Starts profiling this thread; the function returned stops and writes the profile to `file`. */
export async function startCpuProfile(file: string, intervalMicros = 1000): Promise<() => Promise<CpuProfile>> {
  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: intervalMicros });
  await post(session, 'Profiler.start');
  return async () => {
    try {
      const { profile } = await post<{ profile: CpuProfile }>(session, 'Profiler.stop');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      return profile;
    } finally {
      session.disconnect();
    }
  };
}
