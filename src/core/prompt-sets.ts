import type { AnswerStyle } from './answer';
import { fetchBytes } from './fetch-bytes';
import { DEFAULT_TEMPLATES, INITIAL_MEMORY, type PromptTemplates, templateProblem } from './prompts';
import { PythonSourceError, readPythonStrings } from './python-strings';

/**
 * Prompt sets: the app's own wording, and the MemAgent checkpoints' own
 * prompts. The latter are never part of this project: they are read at run
 * time out of the official Python files, at a pinned commit, and used only
 * when the file's SHA-256 is the pinned one.
 */

/** How a final reply is read, as the set's final template asks for it (see answer.ts). */
export type { AnswerStyle };

export type PromptSetId = 'memagent' | 'memagent-boxed' | 'app' | 'custom';
export type FileSetId = 'memagent' | 'memagent-boxed';

export const MEMAGENT_REPOSITORY = 'BytedTsinghua-SIA/MemAgent';
export const MEMAGENT_COMMIT = '76b7a658988e4ea53d7388a62de6c0ce79084146';
/** Where the pinned files are fetched from unless a mirror is set: `<base>/<path>`. */
export const DEFAULT_PROMPTS_BASE = `https://raw.githubusercontent.com/${MEMAGENT_REPOSITORY}/${MEMAGENT_COMMIT}`;

export const PROMPT_SET_LABELS: Readonly<Record<PromptSetId, string>> = {
  memagent: 'MemAgent (paper)',
  'memagent-boxed': 'MemAgent (boxed)',
  app: "This app's wording",
  custom: 'Edited templates',
};

/** One official file, as pinned. */
export interface PromptFileSpec {
  set: FileSetId;
  /** Path in the MemAgent repository. */
  path: string;
  bytes: number;
  sha256: string;
  answerStyle: AnswerStyle;
}

export const PROMPT_FILES: readonly PromptFileSpec[] = [
  {
    set: 'memagent',
    path: 'taskutils/memory_eval/utils/recurrent.py',
    bytes: 4408,
    sha256: '1e0082a7a85a97663eb5e747ae7d925c153acab8f403c026b15debd1a1b97e41',
    answerStyle: 'recurrent',
  },
  {
    set: 'memagent-boxed',
    path: 'taskutils/memory_eval/utils/recurrent_boxed.py',
    bytes: 4088,
    sha256: '18685b1a3c2422a27581d802ceed2559e181fb97ab858fa7fc8811b7cd5a69cb',
    answerStyle: 'recurrent-boxed',
  },
];

export function isFileSet(id: string): id is FileSetId {
  return id === 'memagent' || id === 'memagent-boxed';
}

export function fileSpec(set: FileSetId, specs: readonly PromptFileSpec[] = PROMPT_FILES): PromptFileSpec {
  return specs.find((s) => s.set === set)!;
}

/** Which file a set was read from: enough to say on a run exactly what it used. */
export interface PromptFileRef {
  path: string;
  commit: string;
  sha256: string;
}

export interface PromptSet {
  id: PromptSetId;
  label: string;
  /** In `str.format` syntax, as the official code uses them (see renderTemplate). */
  templates: PromptTemplates;
  initialMemory: string;
  /** How the final reply is read: the answer style of reads and the default method of evaluations. */
  answerStyle: AnswerStyle;
  file?: PromptFileRef;
}

/** What a run records about its prompts. */
export interface PromptRecord {
  set: PromptSetId;
  label: string;
  answerStyle: AnswerStyle;
  file?: PromptFileRef & {
    /** Where this copy came from: the URL it was fetched from, or "imported <name>". */
    source?: string;
  };
  /** Why the set differs from the one asked for (the MemAgent file was not available yet). */
  note?: string;
}

export const APP_PROMPT_SET: Readonly<PromptSet> = Object.freeze({
  id: 'app',
  label: PROMPT_SET_LABELS.app,
  templates: DEFAULT_TEMPLATES,
  initialMemory: INITIAL_MEMORY,
  answerStyle: 'lenient',
});

/** Templates a person edited: the app's reading of answers, which accepts both answer forms. */
export function customPromptSet(templates: PromptTemplates): PromptSet {
  return {
    id: 'custom',
    label: PROMPT_SET_LABELS.custom,
    templates: { update: templates.update, final: templates.final },
    initialMemory: INITIAL_MEMORY,
    answerStyle: 'lenient',
  };
}

export function promptRecord(set: PromptSet, extra: { source?: string; note?: string } = {}): PromptRecord {
  const record: PromptRecord = { set: set.id, label: set.label, answerStyle: set.answerStyle };
  if (set.file) record.file = { ...set.file, ...(extra.source ? { source: extra.source } : {}) };
  if (extra.note) record.note = extra.note;
  return record;
}

/** A prompt file that cannot be used; nothing of it has been used or kept. */
export class PromptFileError extends Error {
  override name = 'PromptFileError';
  constructor(
    message: string,
    readonly reason: 'hash' | 'format' | 'network' | 'unknown',
  ) {
    super(message);
  }
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const digest = await crypto.subtle.digest('SHA-256', copy);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function short(sha: string): string {
  return sha.slice(0, 12);
}

/**
 * The set a pinned file holds, read from its bytes: refused whole unless the
 * bytes hash to the pinned SHA-256 and hold TEMPLATE, TEMPLATE_FINAL and
 * NO_MEMORY as plain string constants with their slots.
 */
export async function promptSetFromFile(spec: PromptFileSpec, bytes: Uint8Array): Promise<PromptSet> {
  const name = spec.path.split('/').pop();
  const sha = await sha256Hex(bytes);
  if (sha !== spec.sha256) {
    throw new PromptFileError(
      `${name} was refused: its SHA-256 is ${sha}, not ${spec.sha256}, the hash of the file at MemAgent commit ${MEMAGENT_COMMIT.slice(0, 7)}. ` +
        `It is another version of the file, or not that file at all; nothing of it was used or kept. ` +
        `Get ${spec.path} from that commit (${DEFAULT_PROMPTS_BASE}/${spec.path}).`,
      'hash',
    );
  }
  let strings: Map<string, string>;
  try {
    strings = readPythonStrings(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    const why = e instanceof PythonSourceError ? e.message : 'it is not UTF-8 text';
    throw new PromptFileError(`${name} (SHA-256 ${short(sha)}…) could not be read: ${why}`, 'format');
  }
  const missing = ['TEMPLATE', 'TEMPLATE_FINAL', 'NO_MEMORY'].filter((k) => !strings.has(k));
  if (missing.length) {
    throw new PromptFileError(`${name} (SHA-256 ${short(sha)}…) holds no string constant ${missing.join(', ')}; nothing of it was used.`, 'format');
  }
  const templates = { update: strings.get('TEMPLATE')!, final: strings.get('TEMPLATE_FINAL')! };
  const problem = templateProblem(templates);
  if (problem) throw new PromptFileError(`${name}: its templates lack a slot (${problem.replace(/ Use .*$/, '')}); nothing of it was used.`, 'format');
  return {
    id: spec.set,
    label: PROMPT_SET_LABELS[spec.set],
    templates,
    initialMemory: strings.get('NO_MEMORY')!,
    answerStyle: spec.answerStyle,
    file: { path: spec.path, commit: MEMAGENT_COMMIT, sha256: sha },
  };
}

/** The pinned file these bytes are, by their hash; null when they are none of them. */
export async function identifyPromptFile(bytes: Uint8Array, specs: readonly PromptFileSpec[] = PROMPT_FILES): Promise<PromptFileSpec | null> {
  const sha = await sha256Hex(bytes);
  return specs.find((s) => s.sha256 === sha) ?? null;
}

/** The pinned file's URL under `base` (the raw files at the pinned commit, or a mirror of them). */
/** Where a fetched pinned file goes once its hash is checked: the browser's database, or the CLI's cache folder. */
export type KeepPromptFile = (spec: PromptFileSpec, bytes: Uint8Array, url: string) => void | Promise<void>;

export interface PinnedFetch {
  spec: PromptFileSpec;
  /** The pinned commit's raw files, or a mirror. */
  base: string;
  fetch: typeof fetch;
  timeoutMs: number;
  /** Extra fetch options (the browser asks past its HTTP cache). */
  init?: RequestInit;
  keep: KeepPromptFile;
}

/**
 * Fetches a pinned prompt file, checks its hash and reads its set; a file
 * with another hash is refused whole and nothing is kept. The one fetcher of
 * the browser and the CLI, which differ only in where they keep the bytes.
 */
export async function fetchPinnedFile({ spec, base, fetch: fetchImpl, timeoutMs, init, keep }: PinnedFetch): Promise<{ set: PromptSet; url: string }> {
  const url = promptFileUrl(spec, base);
  const bytes = await fetchBytes(
    url,
    { fetch: fetchImpl, init: { ...init, signal: AbortSignal.timeout(timeoutMs) } },
    (m) => new PromptFileError(m, 'network'),
  );
  const set = await promptSetFromFile(spec, bytes);
  await keep(spec, bytes, url);
  return { set, url };
}

export function promptFileUrl(spec: PromptFileSpec, base: string = DEFAULT_PROMPTS_BASE): string {
  return `${base.trim().replace(/\/+$/, '')}/${spec.path}`;
}

/** A mirror address, checked: http(s) only, so that a typo says what is wrong before anything is fetched. */
export function promptsBaseProblem(base: string): string | null {
  const text = base.trim();
  if (!text) return null;
  try {
    const url = new URL(text);
    if (url.protocol === 'http:' || url.protocol === 'https:') return null;
  } catch {
    // fall through
  }
  return `"${text}" is not an http:// or https:// address. Enter the folder that holds taskutils/…, e.g. ${DEFAULT_PROMPTS_BASE}.`;
}
