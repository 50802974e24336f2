import { pyStrip } from './pytext';

/**
 * How an answer is read out of the final reply.
 * - `recurrent`: the paper's RULER-HotpotQA method; the text after the last
 *   "the answer is" (case-sensitive, `*` removed), else no answer.
 * - `recurrent-boxed`: the last `\boxed{…}` (or `\boxed ` up to `$`, or `\fbox{…}`), else no answer.
 * - `lenient`: this app's own reading for its generated tasks; it never finds nothing.
 */
export type AnswerStyle = 'recurrent' | 'recurrent-boxed' | 'lenient';

/** How a memory-update reply becomes the memory. */
export type MemoryKeeping =
  /** This app's reading: the reply, trimmed. */
  | 'trimmed'
  /** The paper's: the reply exactly as returned; after a `</think>`, only what follows the last one, stripped. */
  | 'verbatim';

const THINK_END = '</think>';

/** What a reasoning model's reply says after its last `</think>`, stripped; the reply itself when it has none. */
function afterThinking(reply: string): string {
  return reply.includes(THINK_END) ? pyStrip(reply.slice(reply.lastIndexOf(THINK_END) + THINK_END.length)) : reply;
}

/** The memory a reply leaves. */
export function memoryFromReply(reply: string, keeping: MemoryKeeping): string {
  return keeping === 'trimmed' ? reply.trim() : afterThinking(reply);
}

/**
 * The answer in a final reply. The strict styles return null when the reply
 * holds no answer in their form: the paper scores that 0, with no fallback.
 * As the paper's scoring does, the reply is stripped and a reasoning model's
 * thinking dropped first (all of it is read when nothing follows `</think>`).
 */
export function extractAnswer(reply: string): string;
export function extractAnswer(reply: string, style: 'lenient'): string;
export function extractAnswer(reply: string, style: AnswerStyle): string | null;
export function extractAnswer(reply: string, style: AnswerStyle = 'lenient'): string | null {
  if (style === 'lenient') return lenientAnswer(reply);
  const response = pyStrip(reply);
  const said = afterThinking(response) || response;
  return style === 'recurrent' ? phraseAnswer(said) : boxedAnswer(said);
}

const PHRASE = 'the answer is';
// End-of-turn markers of DeepSeek-R1 distills, which the paper's scoring removes from an answer.
const R1_MARKERS = ['<｜Assistant｜>', '<｜end▁of▁sentence｜>'];

function phraseAnswer(reply: string): string | null {
  const text = reply.replaceAll('*', '');
  const at = text.lastIndexOf(PHRASE);
  if (at < 0) return null;
  let answer = pyStrip(text.slice(at + PHRASE.length));
  for (const marker of R1_MARKERS) answer = answer.replaceAll(marker, '');
  return pyStrip(pyStrip(pyStrip(answer), '.'));
}

/**
 * The last boxed expression, read as the paper's scoring reads it: a `\boxed `
 * anywhere wins (up to the next `$`); otherwise the last `\boxed` (or, with
 * none, the last `\fbox`) up to the brace that balances the first one opened.
 */
function lastBoxed(s: string): string | null {
  if (s.includes('\\boxed ')) return `\\boxed ${s.split('\\boxed ').at(-1)!.split('$')[0]}`;
  let at = s.lastIndexOf('\\boxed');
  if (at < 0) at = s.lastIndexOf('\\fbox');
  if (at < 0) return null;
  let open = 0;
  for (let i = at; i < s.length; i++) {
    if (s[i] === '{') open++;
    else if (s[i] === '}' && --open === 0) return s.slice(at, i + 1);
  }
  return null;
}

function boxedAnswer(reply: string): string | null {
  const s = lastBoxed(reply);
  if (s === null) return null;
  if (s.startsWith('\\boxed ')) return s.slice('\\boxed '.length);
  // The paper's code asserts this shape (and stops on anything else, \fbox{…} included); here that is no answer,
  // except \fbox{…}, whose content is the answer as \boxed{…}'s is.
  for (const open of ['\\boxed{', '\\fbox{']) if (s.startsWith(open) && s.endsWith('}')) return s.slice(open.length, -1);
  return null;
}

/**
 * This app's lenient reading: the content of the last \boxed{...}; otherwise
 * the text after the last "the answer is", in any case; otherwise the whole reply.
 */
function lenientAnswer(reply: string): string {
  const boxed = lenientBoxed(reply);
  if (boxed !== null) return boxed.trim();
  const m = /the answer is/gi;
  let last = -1;
  for (let r = m.exec(reply); r; r = m.exec(reply)) last = r.index + r[0].length;
  if (last >= 0) {
    // "…what the answer is." leaves only a period: no answer, so fall through.
    const rest = reply
      .slice(last)
      .replace(/^[\s:：]+/, '')
      .trim()
      .replace(/\.$/, '')
      .trim();
    if (rest) return rest;
  }
  return reply.trim();
}

/** Content of the last \boxed{...}, with nested braces balanced; null if none closes. */
function lenientBoxed(reply: string): string | null {
  let from = reply.lastIndexOf('\\boxed{');
  while (from >= 0) {
    let depth = 0;
    const open = from + '\\boxed'.length;
    for (let i = open; i < reply.length; i++) {
      const c = reply[i];
      if (c === '{') depth++;
      else if (c === '}' && --depth === 0) return reply.slice(open + 1, i);
    }
    from = reply.lastIndexOf('\\boxed{', from - 1);
  }
  return null;
}
