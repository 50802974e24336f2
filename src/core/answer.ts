/**
 * The answer inside a model's reply, as the MemAgent evaluation reads it: the
 * content of the last \boxed{...}; otherwise the text after the last
 * "the answer is"; otherwise the whole reply.
 */
export function extractAnswer(reply: string): string {
  const boxed = lastBoxed(reply);
  if (boxed !== null) return boxed.trim();
  const m = /the answer is/gi;
  let last = -1;
  for (let r = m.exec(reply); r; r = m.exec(reply)) last = r.index + r[0].length;
  if (last >= 0) {
    // "…what the answer is." leaves only a period: no answer, so fall through.
    const rest = reply.slice(last).replace(/^[\s:：]+/, '').trim().replace(/\.$/, '').trim();
    if (rest) return rest;
  }
  return reply.trim();
}

/** Content of the last \boxed{...}, with nested braces balanced; null if none closes. */
function lastBoxed(reply: string): string | null {
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
