/**
 * How the official code reads a planner's reply: a stop wherever "STOP"
 * appears (its thinking included), else every `✿FUNCTION✿: name` /
 * `✿ARGS✿: {...}` pair, and for each `retrievesearch` call its query and
 * top_k, falling back to the question and 8 on any error.
 */
import { PY_SPACE, pyStrip } from '../pytext';
import { type PyValue, pyJsonLoads, pyStr } from './py-values';

export const TOOL_NAME = 'retrievesearch';
/** The top_k recorded when the planner gives none (it is recorded, never used: four units are retrieved). */
export const DEFAULT_TOP_K = 8;

export interface FunctionCall {
  name: string;
  arguments: string;
}

export type PlannerReply = { stop: true; calls: [] } | { stop: false; calls: FunctionCall[] };

// Python's `\s` (its whitespace set, not JavaScript's); `$` is the text's end (Python's also matches before a final newline, which a stripped reply never has).
const S = `[${PY_SPACE}]*`;
const CALL = new RegExp(`✿FUNCTION✿:${S}([^\\n]+)${S}✿ARGS✿:${S}([^✿]+?)(?=✿RESULT✿|✿RETURN✿|✿FUNCTION✿|$)`, 'g');

/** `_remove_trailing_comment_of_fn_args`: what follows the JSON object (or the fenced block) is cut off. */
export function removeTrailingComment(args: string): string {
  let out = pyStrip(args);
  if (out.startsWith('{')) {
    const k = out.lastIndexOf('}');
    if (k > 0) out = out.slice(0, k + 1);
  }
  if (out.startsWith('```')) {
    const k = out.lastIndexOf('\n```');
    if (k > 0) out = out.slice(0, k + 4);
  }
  return out;
}

/** `_parse_function_calls_from_text(text)`: the stop, or the calls in order. */
export function parsePlannerReply(text: string): PlannerReply {
  if (text.includes('STOP')) return { stop: true, calls: [] };
  const calls: FunctionCall[] = [];
  for (const m of text.matchAll(CALL)) {
    calls.push({ name: pyStrip(m[1]!), arguments: removeTrailingComment(pyStrip(m[2]!)) });
  }
  return { stop: false, calls };
}

/** One retrieval as the history records it: the query as given, and top_k as Python prints it. */
export interface Retrieval {
  query: string;
  /** `str(top_k)`: "5", "5.0", "8", "True", "[3, 5]", … */
  topK: string;
  /** Why the call's arguments were not used (the question and 8 were), when they were not. */
  fallback?: string;
}

/**
 * A `retrievesearch` call's arguments: `json.loads`, then `query` (else the
 * question) and `top_k` (else 8); on any error the question and 8. A query
 * that is not a string would crash the official code; it is read as an error.
 */
export function retrievalOf(call: FunctionCall, question: string): Retrieval {
  let args: PyValue;
  try {
    args = pyJsonLoads(call.arguments);
  } catch (e) {
    return { query: question, topK: String(DEFAULT_TOP_K), fallback: `its arguments are not JSON (${(e as Error).message})` };
  }
  if (!(args instanceof Map)) return { query: question, topK: String(DEFAULT_TOP_K), fallback: 'its arguments are not a JSON object' };
  const query = args.has('query') ? args.get('query')! : question;
  if (typeof query !== 'string') return { query: question, topK: String(DEFAULT_TOP_K), fallback: 'its query is not a string' };
  return { query, topK: args.has('top_k') ? pyStr(args.get('top_k')!) : String(DEFAULT_TOP_K) };
}

/** The retrievals a reply asks for: its `retrievesearch` calls in order, other names ignored. */
export function retrievalsOf(reply: PlannerReply, question: string): Retrieval[] {
  return reply.calls.filter((c) => c.name === TOOL_NAME).map((c) => retrievalOf(c, question));
}
