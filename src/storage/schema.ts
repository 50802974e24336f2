import type { ChunkSpan } from '../core/chunker';
import type { FinishReason } from '../core/generation';
import type { PromptTemplates } from '../core/prompts';

/** A book as stored: metadata here, its text in a store of its own so listings stay light. */
export interface DocumentRecord {
  /** SHA-256 of the file's bytes: the same file twice is one document. */
  id: string;
  name: string;
  bytes: number;
  encoding: string;
  chars: number;
  tokens: number;
  addedAt: number;
}

export interface RunSettings {
  /** Chunk size the person asked for. */
  requestedChunkTokens: number;
  /** Chunk size the budget allowed. */
  chunkTokens: number;
  memoryTokens: number;
  contextTokens: number;
  temperature: number;
  topP: number;
  seed?: number;
}

export type RunStatus = 'running' | 'paused' | 'cancelled' | 'done' | 'failed';

export interface RunRecord {
  id: string;
  documentId: string;
  documentName: string;
  question: string;
  engineId: string;
  settings: RunSettings;
  templates: PromptTemplates;
  chunks: ChunkSpan[];
  status: RunStatus;
  /** Index of the next chunk to read; equals chunks.length once every chunk is read. */
  nextChunk: number;
  /** Memory after chunk nextChunk − 1: with nextChunk, all a resume needs. */
  memory: string;
  answer?: string;
  reply?: string;
  error?: string;
  createdAt: number;
  updatedAt: number;
  finishedAt?: number;
}

export interface RevisionRecord {
  runId: string;
  /** Chunk index, from 0; shown as "Revision index + 1". */
  index: number;
  memory: string;
  memoryTokens: number;
  start: number;
  end: number;
  chunkTokens: number;
  promptTokens: number;
  completionTokens: number;
  ms: number;
  finishReason: FinishReason;
  committedAt: number;
}

/** What every tab hears about a run; texts are read from storage when shown. */
export type RunEvent =
  | { type: 'revision'; runId: string; index: number }
  | { type: 'status'; runId: string; status: RunStatus; error?: string }
  | { type: 'control'; runId: string; action: 'pause' | 'cancel' };

export const EVENTS_CHANNEL = 'memagent-events';
