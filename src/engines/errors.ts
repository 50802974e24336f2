/**
 * The engine failures the app reacts to, one class each, every one carrying
 * what caused it (`cause`). The job host, the UI and the CLI branch on the
 * class (`instanceof`); across the worker boundary, where structured clone
 * keeps only name and message, `kind` is the discriminant, and `wireError` /
 * `fromWire` here are the one place that converts.
 */

/** What failed, as the protocol carries it. */
export type EngineFailure =
  | 'device-lost'
  | 'context-window'
  | 'model-library'
  | 'webgpu-missing'
  | 'gpu-feature'
  | 'model-load'
  | 'model-runtime'
  | 'settings'
  | 'server-refused'
  | 'server-failed'
  | 'server-unreachable'
  | 'server-blocked'
  | 'retries-exhausted';

export interface EngineErrorOptions {
  cause?: unknown;
}

export abstract class EngineError extends Error {
  abstract readonly kind: EngineFailure;
  constructor(message: string, options?: EngineErrorOptions) {
    super(message, options);
  }
}

/** The GPU stopped responding (out of memory, a driver reset): the job host reloads the engine and reads on. */
export class DeviceLostError extends EngineError {
  override name = 'DeviceLostError';
  readonly kind = 'device-lost';
}

/** A step's prompt does not fit the context window the model was loaded with. */
export class ContextWindowExceededError extends EngineError {
  override name = 'ContextWindowSizeExceededError';
  readonly kind = 'context-window';
}

/**
 * The runtime loaded the model with a smaller context window than the run
 * needs, so its steps would not fit: a case of the above, and crosses the
 * worker boundary as one (the same kind, its own name).
 */
export class ContextWindowShortError extends ContextWindowExceededError {
  override name = 'ContextWindowError';
}

/** The model library (.wasm) could not be loaded for this model or this runtime's version. */
export class ModelLibraryError extends EngineError {
  override name = 'ModelLibraryError';
  readonly kind = 'model-library';
}

/** This page has no WebGPU, or lost it. */
export class WebGPUUnavailableError extends EngineError {
  override name = 'WebGPUUnavailableError';
  readonly kind = 'webgpu-missing';
}

/** The GPU lacks a feature the model build needs (shader-f16). */
export class GpuFeatureError extends EngineError {
  override name = 'ShaderF16SupportError';
  readonly kind = 'gpu-feature';
}

/** A runtime could not load the model's files. */
export class ModelLoadError extends EngineError {
  override name = 'ModelLoadError';
  readonly kind = 'model-load';
}

/** A runtime failed while writing a reply. */
export class ModelRuntimeError extends EngineError {
  override name = 'ModelRuntimeError';
  readonly kind = 'model-runtime';
}

/** What the person entered cannot work (an address that is not one, a model the server does not serve, a missing context window): theirs to fix, not the server's fault. */
export class EngineSettingsError extends EngineError {
  override name = 'EngineSettingsError';
  readonly kind = 'settings';
}

/** A server answered with an error: its real HTTP status (absent for an error reported inside a stream without one) and its own words. */
export class ServerError extends EngineError {
  override name = 'ServerError';
  readonly kind: EngineFailure = 'server-failed';
  constructor(
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
    options?: EngineErrorOptions,
  ) {
    super(message, options);
  }
}

/** The server refused the request's credentials (HTTP 401 or 403). */
export class ServerRefusedError extends ServerError {
  override name = 'ServerRefusedError';
  override readonly kind = 'server-refused';
}

/** No answer came from the server, or the connection broke off before the reply was complete. */
export class ServerUnreachableError extends EngineError {
  override name = 'ServerUnreachableError';
  readonly kind = 'server-unreachable';
}

/** The browser would not let this page read from the server: CORS, mixed content, or the app's own Content Security Policy. */
export class CorsError extends EngineError {
  override name = 'CorsError';
  readonly kind = 'server-blocked';
}

/** A step failed every time it was tried; `cause` is the last failure, as the server gave it. */
export class RetriesExhaustedError extends EngineError {
  override name = 'RetriesExhaustedError';
  readonly kind = 'retries-exhausted';
}

/** An error as it crosses the worker boundary: plain data. */
export interface WireError {
  name: string;
  message: string;
  /** Set for an engine failure: which one. */
  kind?: EngineFailure;
}

const CLASSES: Record<EngineFailure, new (message: string) => EngineError> = {
  'device-lost': DeviceLostError,
  'context-window': ContextWindowExceededError,
  'model-library': ModelLibraryError,
  'webgpu-missing': WebGPUUnavailableError,
  'gpu-feature': GpuFeatureError,
  'model-load': ModelLoadError,
  'model-runtime': ModelRuntimeError,
  settings: EngineSettingsError,
  'server-refused': ServerRefusedError,
  'server-failed': ServerError,
  'server-unreachable': ServerUnreachableError,
  'server-blocked': CorsError,
  'retries-exhausted': RetriesExhaustedError,
};

/** Any thrown value as plain data for the other side of the worker boundary. */
export function wireError(e: unknown): WireError {
  const err = e instanceof Error ? e : new Error(String(e));
  const wire: WireError = { name: err.name, message: err.message };
  if (err instanceof EngineError) wire.kind = err.kind;
  return wire;
}

/** The error `wireError` described, rebuilt: an engine failure as its own class again, anything else a plain Error of that name. */
export function fromWire(wire: WireError): Error {
  const Class = wire.kind ? CLASSES[wire.kind] : undefined;
  const err = Class ? new Class(wire.message) : new Error(wire.message);
  err.name = wire.name;
  return err;
}

const BY_NAME = new Map(Object.values(CLASSES).map((Class) => [new Class('').name, Class]));

/** The engine failure a runtime's error name stands for (WebLLM's classes are not exported, so they are known by name), or a plain Error of that name. */
export function errorNamed(name: string, message: string, options?: EngineErrorOptions): Error {
  const Class = BY_NAME.get(name);
  if (Class) return new (Class as new (message: string, options?: EngineErrorOptions) => EngineError)(message, options);
  const err = new Error(message, options);
  err.name = name;
  return err;
}
