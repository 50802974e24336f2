import * as Comlink from 'comlink';
import { useEffect, useState, useSyncExternalStore } from 'react';
import type { GpuCapability } from '../../../engines/webllm/check/webgpu';
import type { ModelProgress } from '../../../engines/webllm/models/models';
import type { ModelList } from '../../../engines/webllm/manager';
import { agent, call } from '../../client';

let gpu: Promise<GpuCapability> | undefined;

/** The worker's WebGPU check, asked once per page. */
export function gpuCapability(): Promise<GpuCapability> {
  gpu ??= call(agent.gpuCapability());
  return gpu;
}

export function useGpu(): GpuCapability | null {
  const [cap, setCap] = useState<GpuCapability | null>(null);
  useEffect(() => {
    let alive = true;
    void gpuCapability()
      .then((c) => alive && setCap(c))
      .catch(() => undefined); // no adapter to describe leaves the capability unknown
    return () => {
      alive = false;
    };
  }, []);
  return cap;
}

/** WebLLM first where a hardware GPU can run it; otherwise the engine list's own order. */
export function usePreferredEngine(): string | undefined {
  const cap = useGpu();
  return cap && cap.status === 'ok' && !cap.fallback ? 'webllm' : undefined;
}

// One model list for the Models region and the model picker, refreshed after every change.
let list: ModelList | null = null;
let listError: string | null = null;
let pending: Promise<void> | undefined;
const listeners = new Set<() => void>();
const notify = () => listeners.forEach((l) => l());

let again = false;

/** Reads the list again; a change made while a read is in flight gets one more read after it. */
export function refreshModels(): Promise<void> {
  if (pending) {
    again = true;
    return pending;
  }
  pending = call(agent.listModels())
    .then(
      (l) => {
        list = l;
        listError = null;
      },
      (e: unknown) => {
        listError = (e as Error).message;
      },
    )
    .finally(() => {
      pending = undefined;
      notify();
      if (again) {
        again = false;
        void refreshModels();
      }
    });
  return pending;
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** The models with their cache state; fetched only once `enabled` (WebGPU is there). */
export function useModels(enabled: boolean): { list: ModelList | null; error: string | null } {
  const snapshot = useSyncExternalStore(subscribe, () => list);
  const error = useSyncExternalStore(subscribe, () => listError);
  useEffect(() => {
    if (enabled && !list) void refreshModels();
  }, [enabled]);
  return { list: snapshot, error };
}

// The latest download or load report, from any cause (a button here, a run in the worker).
let progress: ModelProgress | null = null;
let watching = false;

function watch(): void {
  if (watching) return;
  watching = true;
  void agent.watchModels(
    Comlink.proxy((p: ModelProgress) => {
      progress = p;
      notify();
      if (p.state !== 'working') void refreshModels();
    }),
  );
}

export function useModelProgress(enabled: boolean): ModelProgress | null {
  useEffect(() => {
    if (enabled) watch();
  }, [enabled]);
  return useSyncExternalStore(subscribe, () => progress);
}
