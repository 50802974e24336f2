/**
 * InfMem's official prompts are never part of this project: they are read at
 * run time out of two pinned files, used only when each file's SHA-256 is the
 * pinned one. InfMem's evaluation code gives the templates, the tool schema
 * and the sentence that closes a cut-off thought; Qwen-Agent's function-call
 * prompt gives the system message that presents the tool to the planner.
 */
import { sha256Hex } from '../prompt-sets';
import { PythonSourceError } from '../python-strings';
import { evaluate, functionBody, moduleValues, type PyLine, pythonLines } from './py-module';
import type { PyDict, PyValue } from './py-values';

export type InfmemFileId = 'infmem' | 'fncall';

/** One pinned file: where it lives and the bytes it must have. */
export interface InfmemFileSpec {
  id: InfmemFileId;
  repository: string;
  commit: string;
  path: string;
  bytes: number;
  sha256: string;
}

export const INFMEM_FILES: Readonly<Record<InfmemFileId, InfmemFileSpec>> = {
  infmem: {
    id: 'infmem',
    repository: 'UCMP13753/InfMem',
    commit: '4f4de32311bfff8e8847664705301076b6d61453',
    path: 'taskutils/memory_eval/utils/infmem.py',
    bytes: 27191,
    sha256: '2f4ef6d5224fc9373b244083251285ebbf18cf8dbffb11bf3cb20548b3280b73',
  },
  fncall: {
    id: 'fncall',
    repository: 'QwenLM/Qwen-Agent',
    commit: '31a4d36d123688581a9e9744427272b33ce940e0',
    path: 'qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py',
    bytes: 15789,
    sha256: '87338175171d25a044214d741aa14c96b6680bf819093767a03e20c40193c3e5',
  },
};

/** The folder of raw files at the pinned commit: a file's URL is `<base>/<path>`. */
export function defaultInfmemBase(spec: InfmemFileSpec): string {
  return `https://raw.githubusercontent.com/${spec.repository}/${spec.commit}`;
}

export function infmemFileUrl(spec: InfmemFileSpec, base: string = defaultInfmemBase(spec)): string {
  return `${base.trim().replace(/\/+$/, '')}/${spec.path}`;
}

/** What InfMem's evaluation file holds for its requests. */
export interface InfmemTemplates {
  /** The planner's user message: `{prompt}`, `{retrieval_history}`, `{memory}`. */
  planner: string;
  /** The writer's user message: `{prompt}`, `{retrieve}`, `{chunk}`, `{memory}` (`{retrieval_history}` is given and unused). */
  writer: string;
  /** The final request: `{prompt}`, `{memory}`. */
  final: string;
  initialMemory: string;
  /** The tool the planner is offered: the schema's "function" part. */
  tool: PyDict;
  /** What is appended to a first-stage thought that did not close itself. */
  thinkClose: string;
}

/** What Qwen-Agent's function-call prompt file holds for the system message. */
export interface FnCallTemplates {
  /** `FN_CALL_TEMPLATE['en_parallel']`: `{tool_descs}`, `{tool_names}`. */
  system: string;
  /** One tool's description: `{name_for_human}`, `{name_for_model}`, `{description_for_model}`, `{parameters}`, `{args_format}`. */
  toolDescription: string;
  /** The closing words of a tool that takes a JSON object. */
  argsFormat: string;
}

/** A pinned file that cannot be used; nothing of it has been used or kept. */
export class InfmemFileError extends Error {
  override name = 'InfmemFileError';
  constructor(
    message: string,
    readonly reason: 'hash' | 'format' | 'network',
  ) {
    super(message);
  }
}

function fileName(spec: InfmemFileSpec): string {
  return spec.path.split('/').pop()!;
}

/** The file's text, once its hash is the pinned one. */
async function checkedText(spec: InfmemFileSpec, bytes: Uint8Array): Promise<PyLine[]> {
  const sha = await sha256Hex(bytes);
  if (sha !== spec.sha256) {
    throw new InfmemFileError(
      `${fileName(spec)} was refused: its SHA-256 is ${sha}, not ${spec.sha256}, the hash of the file at ${spec.repository} commit ${spec.commit.slice(0, 7)}. ` +
        `Nothing of it was used or kept. Get ${infmemFileUrl(spec)}.`,
      'hash',
    );
  }
  try {
    return pythonLines(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    throw new InfmemFileError(`${fileName(spec)} could not be read: ${e instanceof PythonSourceError ? e.message : 'it is not UTF-8 text'}`, 'format');
  }
}

function missing(spec: InfmemFileSpec, what: string): InfmemFileError {
  return new InfmemFileError(`${fileName(spec)} holds no ${what}; nothing of it was used.`, 'format');
}

function str(spec: InfmemFileSpec, values: ReadonlyMap<string, PyValue>, name: string): string {
  const v = values.get(name);
  if (typeof v !== 'string') throw missing(spec, `string constant ${name}`);
  return v;
}

/** The literal a function's `return` gives, or a line `target = <literal>` in it: every such value, in order. */
function bodyValues(body: readonly PyLine[], match: (line: PyLine) => number): PyValue[] {
  const out: PyValue[] = [];
  for (const line of body) {
    const from = match(line);
    if (from < 0) continue;
    try {
      out.push(evaluate(line.tokens.slice(from), new Map()));
    } catch (e) {
      if (!(e instanceof PythonSourceError)) throw e;
    }
  }
  return out;
}

const isText = (t: PyLine['tokens'][number] | undefined, text: string) => !!t && t.kind !== 'newline' && t.kind !== 'string' && t.text === text;

/** `name = …`: the expression's first token. */
function assigned(name: string) {
  return (line: PyLine) => (isText(line.tokens[0], name) && isText(line.tokens[1], '=') ? 2 : -1);
}

/**
 * The string added to a thought in `call_llm_text`: the line
 * `think_part = think_part.rstrip() + <string>`.
 */
function thinkCloseOf(body: readonly PyLine[]): string | undefined {
  const shape = ['think_part', '=', 'think_part', '.', 'rstrip', '(', ')', '+'];
  const found = bodyValues(body, (line) => (shape.every((text, i) => isText(line.tokens[i], text)) ? shape.length : -1));
  return found.find((v): v is string => typeof v === 'string');
}

/** InfMem's evaluation file, read: refused whole unless its hash is the pinned one and it holds every part. */
export async function readInfmemFile(bytes: Uint8Array, spec: InfmemFileSpec = INFMEM_FILES.infmem): Promise<InfmemTemplates> {
  const lines = await checkedText(spec, bytes);
  const values = moduleValues(lines);
  const schemaBody = functionBody(lines, 'get_bm25search_tool_schema') ?? [];
  const schema = bodyValues(schemaBody, (line) => (isText(line.tokens[0], 'return') ? 1 : -1))[0];
  const tool = schema instanceof Map ? schema.get('function') : undefined;
  if (!(tool instanceof Map) || typeof tool.get('name') !== 'string' || typeof tool.get('description') !== 'string' || !tool.has('parameters')) {
    throw missing(spec, 'tool schema in get_bm25search_tool_schema');
  }
  const thinkClose = thinkCloseOf(functionBody(lines, 'call_llm_text') ?? []);
  if (thinkClose === undefined) throw missing(spec, 'closing words for a thought in call_llm_text');
  return {
    planner: str(spec, values, 'TEMPLATE_CALL_OR_ANSWER'),
    writer: str(spec, values, 'TEMPLATE_RETREIVE_RECURRENT'),
    final: str(spec, values, 'TEMPLATE_FINAL'),
    initialMemory: str(spec, values, 'NO_MEMORY'),
    tool,
    thinkClose,
  };
}

function english(spec: InfmemFileSpec, v: PyValue | undefined, what: string): string {
  const en = v instanceof Map ? v.get('en') : undefined;
  if (typeof en !== 'string') throw missing(spec, what);
  return en;
}

/** Qwen-Agent's function-call prompt file, read: refused whole unless its hash is the pinned one. */
export async function readFnCallFile(bytes: Uint8Array, spec: InfmemFileSpec = INFMEM_FILES.fncall): Promise<FnCallTemplates> {
  const lines = await checkedText(spec, bytes);
  const templates = moduleValues(lines).get('FN_CALL_TEMPLATE');
  const system = templates instanceof Map ? templates.get('en_parallel') : undefined;
  if (typeof system !== 'string') throw missing(spec, "FN_CALL_TEMPLATE['en_parallel']");
  const body = functionBody(lines, 'get_function_description') ?? [];
  const toolDescription = english(spec, bodyValues(body, assigned('tool_desc_template'))[0], 'tool description template in get_function_description');
  // The JSON-object wording is the last of the two `args_format` tables (the first is the code interpreter's).
  const argsFormat = english(spec, bodyValues(body, assigned('args_format')).at(-1), 'argument format in get_function_description');
  return { system, toolDescription, argsFormat };
}
