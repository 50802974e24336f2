/**
 * Reads the string constants of a Python module's top level (`NAME = "..."`,
 * `NAME = """..."""`, adjacent literals, parentheses) without running it: what
 * a prompt file's templates are, decoded exactly as Python decodes them.
 * Anything else in the module (functions, f-strings, other expressions) is
 * skipped.
 */

/** A module that cannot be read as Python, or a literal Python would refuse. */
export class PythonSourceError extends Error {
  override name = 'PythonSourceError';
}

export type Token =
  | { kind: 'name' | 'number'; text: string; column: number }
  | { kind: 'string'; value: string | null; column: number }
  | { kind: 'op'; text: string; column: number }
  | { kind: 'newline' };

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

/** Lines of the source where `at` falls, for messages. */
function lineOf(source: string, at: number): number {
  let line = 1;
  for (let i = 0; i < at && i < source.length; i++) if (source[i] === '\n') line++;
  return line;
}

/** The value of a (non-raw) str literal's body, with Python's escape sequences applied. */
export function unescapePython(body: string, where = ''): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) {
      out += '\\';
      break;
    }
    if (next === '\n') {
      i++; // a backslash at the end of a line joins it to the next
      continue;
    }
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) {
      out += simple;
      i++;
      continue;
    }
    if (/[0-7]/.test(next)) {
      const digits = /^[0-7]{1,3}/.exec(body.slice(i + 1))![0];
      out += String.fromCodePoint(parseInt(digits, 8));
      i += digits.length;
      continue;
    }
    const hexLength = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
    if (hexLength) {
      const hex = body.slice(i + 2, i + 2 + hexLength);
      if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(hex)) {
        throw new PythonSourceError(`Truncated \\${next} escape${where}: Python refuses this string.`);
      }
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) throw new PythonSourceError(`Illegal Unicode character \\U${hex}${where}.`);
      out += String.fromCodePoint(code);
      i += 1 + hexLength;
      continue;
    }
    if (next === 'N') {
      throw new PythonSourceError(`A \\N{...} escape${where} needs Unicode's name table, which this reader does not carry.`);
    }
    // An unknown escape keeps its backslash (Python warns, and keeps it).
    out += '\\';
  }
  return out;
}

/**
 * Splits Python source into the tokens needed here: names, numbers, string literals
 * (decoded; null for bytes and f-strings), operators and logical line ends.
 */
export function tokenize(raw: string): Token[] {
  // Python reads source with universal newlines and skips a byte-order mark.
  const source = raw.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const tokens: Token[] = [];
  let depth = 0;
  let lineStart = 0;
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '\n') {
      if (depth === 0 && tokens.length > 0 && tokens[tokens.length - 1]!.kind !== 'newline') tokens.push({ kind: 'newline' });
      i++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\f') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < source.length && source[i] !== '\n') i++;
      continue;
    }
    if (c === '\\' && source[i + 1] === '\n') {
      i += 2; // explicit line joining
      continue;
    }
    const column = i - lineStart;
    const literal = /^([rRuUbBfF]{0,2})("""|'''|"|')/.exec(source.slice(i, i + 5));
    if (literal && /^(|[rR]|[uU]|[bB]|[fF]|[rR][bBfF]|[bBfF][rR])$/.test(literal[1]!)) {
      const prefix = literal[1]!.toLowerCase();
      const quote = literal[2]!;
      const start = i + literal[0].length;
      let j = start;
      for (;;) {
        if (j >= source.length || (quote.length === 1 && source[j] === '\n')) {
          throw new PythonSourceError(`Unterminated string literal on line ${lineOf(source, i)}.`);
        }
        if (source[j] === '\\') {
          j += 2; // whatever follows a backslash never ends the literal, raw or not
          continue;
        }
        if (source.startsWith(quote, j)) break;
        j++;
      }
      const body = source.slice(start, j);
      const where = ` on line ${lineOf(source, i)}`;
      const value = prefix.includes('b') || prefix.includes('f') ? null : prefix.includes('r') ? body : unescapePython(body, where);
      tokens.push({ kind: 'string', value, column });
      i = j + quote.length;
      continue;
    }
    const name = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9_.]*)/.exec(source.slice(i, i + 256));
    if (name) {
      tokens.push({ kind: /^[0-9]/.test(name[0]) ? 'number' : 'name', text: name[0], column });
      i += name[0].length;
      continue;
    }
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth = Math.max(0, depth - 1);
    // Two-character operators that hold "=": so that "==" or "+=" is never read as an assignment.
    const two = source.slice(i, i + 2);
    if (/^(==|!=|<=|>=|\+=|-=|\*=|\/=|%=|&=|\|=|\^=|:=|->)$/.test(two)) {
      tokens.push({ kind: 'op', text: two, column });
      i += 2;
      continue;
    }
    tokens.push({ kind: 'op', text: c, column });
    i++;
  }
  if (tokens.length > 0 && tokens[tokens.length - 1]!.kind !== 'newline') tokens.push({ kind: 'newline' });
  return tokens;
}

/**
 * Every top-level `NAME = <str literal(s)>` of a module, with its value as
 * Python would hold it. A name assigned more than once keeps its last value,
 * as running the module would; a name last assigned something other than a
 * plain string literal is left out.
 */
export function readPythonStrings(source: string): Map<string, string> {
  const tokens = tokenize(source);
  const out = new Map<string, string>();
  let line: Token[] = [];
  for (const t of tokens) {
    if (t.kind !== 'newline') {
      line.push(t);
      continue;
    }
    const [target, eq, ...rest] = line;
    line = [];
    if (target?.kind !== 'name' || target.column !== 0 || eq?.kind !== 'op' || eq.text !== '=') continue;
    let value = rest;
    if (value[0]?.kind === 'op' && value[0].text === '(' && value.at(-1)?.kind === 'op' && (value.at(-1) as { text: string }).text === ')') {
      value = value.slice(1, -1);
    }
    const strings = value.every((v) => v.kind === 'string' && v.value !== null) && value.length > 0;
    if (strings) out.set(target.text, value.map((v) => (v as { value: string }).value).join(''));
    else out.delete(target.text);
  }
  return out;
}
