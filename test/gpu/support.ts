import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { BenchRecord } from '../../bench/gpu/bench';

/** Chromium's SwiftShader: a software Vulkan driver, the GPU these tests run WebLLM's kernels on. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

export function swiftShaderEnv(): Record<string, string> {
  if (!existsSync(SWIFTSHADER_ICD)) throw new Error(`These tests need Chromium's SwiftShader (${SWIFTSHADER_ICD}): apt-get install chromium.`);
  return { VK_ICD_FILENAMES: SWIFTSHADER_ICD, LD_LIBRARY_PATH: '/usr/lib/chromium' };
}

export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** A bin folder with only the tools run.sh may use: no node, no npm. */
export function bareTools(into: string): string {
  mkdirSync(into);
  for (const tool of ['sh', 'dirname', 'cat', 'mkdir', 'chmod', 'mv', 'xz']) {
    const found = ['/usr/bin', '/bin'].map((d) => join(d, tool)).find((p) => existsSync(p));
    if (!found) throw new Error(`No ${tool} on this machine.`);
    symlinkSync(found, join(into, tool));
  }
  return into;
}

/** Runs a command to its end, its output kept and echoed to the test's log as it comes. */
export function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      process.stderr.write(d);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - t0) / 1000 }));
  });
}

/** What every benchmark run must have measured on the real kernels, whatever the speed. */
export function expectMeasured(record: BenchRecord, stdout: string): void {
  expect(record).toMatchObject({ kind: 'memagent-gpu-bench', size: 'tiny', webllm: '0.2.79', adapter: { fallback: true } });
  expect(record.adapter.architecture).toMatch(/swiftshader/i);
  expect(record.library).toMatchObject({ modelType: 'qwen2', quantization: 'q4f32_1', weightBytes: 309_011_968 });
  expect(record.load.seconds).toBeGreaterThan(0);
  expect(record.load.window).toBe(8192);
  expect(record.prompts).toHaveLength(1);
  for (const p of record.prompts) {
    expect(p.prefillTokensPerSecond).toBeGreaterThan(0);
    expect(p.decodeTokensPerSecond).toBeGreaterThan(0);
    expect(p.written).toBe(2); // the series writes past any end-of-text token
  }
  // The step went through the app's loop: its prompt is the tiny template filled with the question, memory and chunk.
  expect(record.step.promptTokens).toBeGreaterThan(record.step.chunkTokens + record.step.memoryTokens);
  expect(record.step.written).toBeGreaterThanOrEqual(1);
  expect(record.step.written).toBeLessThanOrEqual(2);
  expect(record.step.engineSeconds).toBeLessThanOrEqual(record.step.seconds);
  expect(record.step.outsideMs).toBeGreaterThanOrEqual(0);
  // The GPU holds the weights and the KV cache: more than the weights alone.
  expect(record.memory.afterLoadBytes).toBeGreaterThan(record.library.weightBytes);
  expect(record.memory.peakBytes).toBeGreaterThanOrEqual(record.memory.afterLoadBytes);
  expect(record.bandwidth).toBeNull(); // SwiftShader names no device with a known bandwidth
  expect(stdout).toMatch(/load\s+[\d.]+ s/);
  expect(stdout).toMatch(/prefill [\d.]+ tokens\/s, decode [\d.]+ tokens\/s/);
  expect(stdout).toContain('a software adapter');
}
