/**
 * The GPU time of each kernel WebLLM dispatches, from WebGPU's timestamp
 * queries. WebLLM's tensor runtime (tvmjs) encodes every kernel as a compute
 * pass of its own — one dispatch per pass, in 0.2.79 and 0.2.86 alike — so a
 * pass's begin and end timestamps time one kernel, and the pipeline it sets
 * names it (the shader's entry point is the kernel's name). Dawn's WebGPU
 * classes are wrapped once: the device WebLLM asks for gets
 * `timestamp-query` where the adapter offers it, and while a capture is armed
 * each new compute pass writes its timestamps into a query set.
 */

/** Passes one capture can time; a forward pass of a 7B model dispatches a few hundred kernels. */
const SLOTS = 1024;
/** Two regions of the query set: the decode token's passes, then the prefill chunk's. */
const REGIONS = { decode: 0, prefill: SLOTS } as const;
const QUERIES = 4 * SLOTS;

export type ForwardKind = keyof typeof REGIONS;

export interface KernelTime {
  name: string;
  dispatches: number;
  ms: number;
  /** Of the forward pass's GPU time. */
  share: number;
}

export interface ForwardKernels {
  kind: ForwardKind;
  /** Tokens in this forward pass: 1 for a decode token, up to the prefill chunk size for prefill. */
  tokens: number;
  /** Tokens already in the KV cache when it ran. */
  contextTokens: number;
  passes: number;
  /** Passes beyond the query set's room, not timed. */
  untimed: number;
  /** The kernels' GPU time, summed. */
  gpuMs: number;
  /** The decode step's wall time (forward, sampling, reading the token back), for the same token. */
  wallMs?: number;
  kernels: KernelTime[];
}

export interface GpuKernelTimes {
  offered: boolean;
  /** Why there is nothing to report, where there is not. */
  note?: string;
  decode?: ForwardKernels;
  prefill?: ForwardKernels;
}

type Proto = Record<string, unknown> & { memagentClock?: boolean };
interface Capture {
  kind: ForwardKind;
  tokens: number;
  contextTokens: number;
  passes: number;
  untimed: number;
  names: string[];
  wallMs?: number;
}

interface DeviceLike {
  features: { has(f: string): boolean };
  createQuerySet(d: { type: string; count: number }): unknown;
  createBuffer(d: { size: number; usage: number }): BufferLike;
  createCommandEncoder(): EncoderLike;
  queue: { submit(b: unknown[]): void };
}
interface BufferLike {
  mapAsync(mode: number): Promise<void>;
  getMappedRange(): ArrayBuffer;
  unmap(): void;
}
interface EncoderLike {
  resolveQuerySet(q: unknown, first: number, count: number, dst: BufferLike, offset: number): void;
  copyBufferToBuffer(src: BufferLike, so: number, dst: BufferLike, doff: number, size: number): void;
  finish(): unknown;
}

export class KernelClock {
  private device: DeviceLike | undefined;
  private querySet: unknown;
  private armed: Capture | undefined;
  private captures: Partial<Record<ForwardKind, Capture>> = {};
  private readonly labels = new WeakMap<object, string>();
  private readonly passSlot = new WeakMap<object, { capture: Capture; slot: number }>();
  /** Whether the adapter offered timestamp-query (known once WebLLM has asked for its device). */
  adapterOffers = false;

  /** Wraps WebGPU's classes on `globals` (Dawn's, put on globalThis); once per process. */
  static install(globals: Record<string, unknown> = globalThis as unknown as Record<string, unknown>): KernelClock {
    const clock = new KernelClock();
    const proto = (name: string) => (globals[name] as { prototype?: Proto } | undefined)?.prototype;
    const adapter = proto('GPUAdapter');
    const device = proto('GPUDevice');
    const encoder = proto('GPUCommandEncoder');
    const pass = proto('GPUComputePassEncoder');
    if (!adapter || !device || !encoder || !pass || adapter.memagentClock) return clock;
    adapter.memagentClock = true;

    const requestDevice = adapter.requestDevice as (this: { features: Set<string> }, d?: { requiredFeatures?: string[] }) => Promise<DeviceLike>;
    adapter.requestDevice = async function (this: { features: Set<string> }, d: { requiredFeatures?: string[] } = {}) {
      const offers = this.features.has('timestamp-query');
      clock.adapterOffers ||= offers;
      const asked = offers ? { ...d, requiredFeatures: [...new Set([...(d.requiredFeatures ?? []), 'timestamp-query'])] } : d;
      const made = await requestDevice.call(this, asked);
      if (made.features.has('timestamp-query')) clock.device = made;
      return made;
    };
    const name = (d: { compute?: { entryPoint?: string }; label?: string }) => d.compute?.entryPoint ?? d.label ?? 'unnamed';
    const createPipeline = device.createComputePipeline as (this: unknown, d: { compute?: { entryPoint?: string } }) => object;
    device.createComputePipeline = function (this: unknown, d: { compute?: { entryPoint?: string } }) {
      const p = createPipeline.call(this, d);
      clock.labels.set(p, name(d));
      return p;
    };
    const createPipelineAsync = device.createComputePipelineAsync as (this: unknown, d: { compute?: { entryPoint?: string } }) => Promise<object>;
    device.createComputePipelineAsync = async function (this: unknown, d: { compute?: { entryPoint?: string } }) {
      const p = await createPipelineAsync.call(this, d);
      clock.labels.set(p, name(d));
      return p;
    };
    const beginComputePass = encoder.beginComputePass as (this: unknown, d?: Record<string, unknown>) => object;
    encoder.beginComputePass = function (this: unknown, d?: Record<string, unknown>) {
      const capture = clock.armed;
      if (!capture || !clock.querySet) return beginComputePass.call(this, d);
      capture.passes++;
      const slot = capture.passes - 1;
      if (slot >= SLOTS) {
        capture.untimed++;
        return beginComputePass.call(this, d);
      }
      const first = 2 * (REGIONS[capture.kind] + slot);
      const made = beginComputePass.call(this, {
        ...d,
        timestampWrites: { querySet: clock.querySet, beginningOfPassWriteIndex: first, endOfPassWriteIndex: first + 1 },
      });
      clock.passSlot.set(made, { capture, slot });
      return made;
    };
    const setPipeline = pass.setPipeline as (this: object, p: object) => void;
    pass.setPipeline = function (this: object, p: object) {
      const at = clock.passSlot.get(this);
      if (at) at.capture.names[at.slot] = clock.labels.get(p) ?? 'unnamed';
      return setPipeline.call(this, p);
    };
    return clock;
  }

  /** Whether the device WebLLM uses can time kernels. */
  get ready(): boolean {
    return this.device !== undefined;
  }

  /** Times the passes encoded from now until disarm, as this kind of forward pass; a later one of the kind replaces it. */
  arm(kind: ForwardKind, tokens: number, contextTokens: number): boolean {
    if (!this.device || this.armed) return false;
    this.querySet ??= this.device.createQuerySet({ type: 'timestamp', count: QUERIES });
    this.armed = { kind, tokens, contextTokens, passes: 0, untimed: 0, names: [] };
    this.captures[kind] = this.armed;
    return true;
  }

  disarm(): void {
    this.armed = undefined;
  }

  /** Notes the wall time of the step whose forward pass was timed last. */
  noteWall(kind: ForwardKind, ms: number): void {
    const c = this.captures[kind];
    if (c) c.wallMs = ms;
  }

  has(kind: ForwardKind): boolean {
    return this.captures[kind] !== undefined;
  }

  /** Reads the timestamps back (once the request's work is done) and sums them by kernel; then starts afresh. */
  async collect(): Promise<GpuKernelTimes> {
    if (!this.device) {
      return {
        offered: false,
        note: this.adapterOffers ? 'the device was made without timestamp-query' : 'this adapter does not offer timestamp-query',
      };
    }
    const captures = this.captures;
    this.captures = {};
    if (!captures.decode && !captures.prefill) return { offered: true, note: 'no forward pass was captured' };
    const g = globalThis as unknown as { GPUBufferUsage: Record<string, number>; GPUMapMode: Record<string, number> };
    const bytes = QUERIES * 8;
    const resolved = this.device.createBuffer({ size: bytes, usage: g.GPUBufferUsage.QUERY_RESOLVE! | g.GPUBufferUsage.COPY_SRC! });
    const read = this.device.createBuffer({ size: bytes, usage: g.GPUBufferUsage.MAP_READ! | g.GPUBufferUsage.COPY_DST! });
    const encoder = this.device.createCommandEncoder();
    encoder.resolveQuerySet(this.querySet, 0, QUERIES, resolved, 0);
    encoder.copyBufferToBuffer(resolved, 0, read, 0, bytes);
    this.device.queue.submit([encoder.finish()]);
    await read.mapAsync(g.GPUMapMode.READ!);
    const stamps = new BigUint64Array(read.getMappedRange().slice(0));
    read.unmap();
    for (const b of [resolved, read]) (b as unknown as { destroy(): void }).destroy();
    const out: GpuKernelTimes = { offered: true };
    for (const kind of ['decode', 'prefill'] as const) {
      const c = captures[kind];
      if (c) out[kind] = summarise(c, stamps);
    }
    return out;
  }
}

function summarise(c: Capture, stamps: BigUint64Array): ForwardKernels {
  const byName = new Map<string, { dispatches: number; ns: number }>();
  let total = 0;
  for (let slot = 0; slot < Math.min(c.passes, SLOTS); slot++) {
    const i = 2 * (REGIONS[c.kind] + slot);
    const begin = stamps[i]!;
    const end = stamps[i + 1]!;
    const ns = end > begin ? Number(end - begin) : 0;
    const name = c.names[slot] ?? 'unnamed';
    const k = byName.get(name) ?? { dispatches: 0, ns: 0 };
    k.dispatches++;
    k.ns += ns;
    byName.set(name, k);
    total += ns;
  }
  const ms = (ns: number) => Number((ns / 1e6).toFixed(4));
  const forward: ForwardKernels = {
    kind: c.kind,
    tokens: c.tokens,
    contextTokens: c.contextTokens,
    passes: c.passes,
    untimed: c.untimed,
    gpuMs: ms(total),
    kernels: [...byName]
      .map(([name, k]) => ({ name, dispatches: k.dispatches, ms: ms(k.ns), share: total > 0 ? Number((k.ns / total).toFixed(4)) : 0 }))
      .sort((a, b) => b.ms - a.ms),
  };
  if (c.wallMs !== undefined) forward.wallMs = Number(c.wallMs.toFixed(3));
  return forward;
}
