/**
 * Reads the values a Python module's code writes out as literals, without
 * running it: top-level constants built from string literals, `+`, `%` and
 * dict or list displays (Qwen-Agent's templates), and the literals a function
 * returns or assigns (InfMem's tool schema). Only what Python would compute
 * from the source alone is read; anything else is left out.
 */
import { PythonSourceError, type Token, tokenize } from '../python-strings';
import type { PyDict, PyValue } from './py-values';

/** One logical line: its tokens and its indentation. */
export interface PyLine {
  tokens: Token[];
  indent: number;
}

/** The logical lines of a module, in order. */
export function pythonLines(source: string): PyLine[] {
  const lines: PyLine[] = [];
  let tokens: Token[] = [];
  for (const t of tokenize(source)) {
    if (t.kind !== 'newline') {
      tokens.push(t);
      continue;
    }
    if (tokens.length) lines.push({ tokens, indent: (tokens[0] as { column: number }).column });
    tokens = [];
  }
  return lines;
}

function isOp(t: Token | undefined, text: string): boolean {
  return t?.kind === 'op' && t.text === text;
}

function isName(t: Token | undefined, text?: string): boolean {
  return t?.kind === 'name' && (text === undefined || t.text === text);
}

/** `s % args` for the `%s` conversions a template uses (and `%%`). */
function percentFormat(template: string, args: PyValue[]): string {
  let next = 0;
  const out = template.replace(/%(.)/g, (_m, c: string) => {
    if (c === '%') return '%';
    if (c !== 's') throw new PythonSourceError(`%${c} formatting is not read here.`);
    const v = args[next++];
    if (typeof v !== 'string') throw new PythonSourceError('%s of a value that is not a str is not read here.');
    return v;
  });
  if (next !== args.length) throw new PythonSourceError('not all arguments converted during string formatting');
  return out;
}

/** A reader of one expression of tokens (see `evaluate`). */
class ExpressionReader {
  private at = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly env: ReadonlyMap<string, PyValue>,
  ) {}

  private fail(why: string): never {
    throw new PythonSourceError(why);
  }

  private expect(text: string): void {
    if (!isOp(this.tokens[this.at], text)) this.fail(`"${text}" expected`);
    this.at++;
  }

  /** Items up to `close`, separated by commas, a trailing comma allowed. */
  private items<T>(close: string, item: () => T): { list: T[]; comma: boolean } {
    const list: T[] = [];
    let comma = false;
    while (!isOp(this.tokens[this.at], close)) {
      list.push(item());
      comma = isOp(this.tokens[this.at], ',');
      if (comma) this.at++;
      else if (!isOp(this.tokens[this.at], close)) this.fail(`"," or "${close}" expected`);
    }
    this.at++;
    return { list, comma };
  }

  private strings(): string {
    let s = '';
    while (this.tokens[this.at]?.kind === 'string') {
      const v = (this.tokens[this.at++] as { value: string | null }).value;
      if (v === null) this.fail('a bytes or f-string literal is not read here');
      s += v;
    }
    return s;
  }

  private atom(): PyValue {
    const t = this.tokens[this.at] ?? this.fail('an expression ends early');
    if (t.kind === 'string') return this.strings();
    this.at++;
    if (t.kind === 'number') return /^[0-9_]+$/.test(t.text) ? BigInt(t.text.replaceAll('_', '')) : this.fail(`the number ${t.text} is not read here`);
    if (t.kind === 'name') {
      if (t.text === 'True' || t.text === 'False') return t.text === 'True';
      if (t.text === 'None') return null;
      return this.env.has(t.text) ? this.env.get(t.text)! : this.fail(`${t.text} is not a constant read here`);
    }
    if (isOp(t, '(')) {
      const { list, comma } = this.items(')', () => this.expression());
      return list.length === 1 && !comma ? list[0]! : { tuple: list };
    }
    if (isOp(t, '[')) return this.items(']', () => this.expression()).list;
    if (isOp(t, '{')) {
      const dict: PyDict = new Map();
      this.items('}', () => {
        const key = this.expression();
        this.expect(':');
        if (typeof key !== 'string') this.fail('a dict key that is not a str is not read here');
        dict.set(key, this.expression());
      });
      return dict;
    }
    return this.fail(`"${t.kind === 'op' ? t.text : t.kind}" is not read here`);
  }

  private postfix(): PyValue {
    let v = this.atom();
    while (isOp(this.tokens[this.at], '[')) {
      this.at++;
      const key = this.expression();
      this.expect(']');
      if (v instanceof Map && typeof key === 'string' && v.has(key)) v = v.get(key)!;
      else this.fail('a subscript that is not a key of a dict is not read here');
    }
    return v;
  }

  private term(): PyValue {
    let v = this.postfix();
    while (isOp(this.tokens[this.at], '%')) {
      this.at++;
      const args = this.postfix();
      if (typeof v !== 'string') this.fail('% of a value that is not a str is not read here');
      const list = typeof args === 'object' && args !== null && 'tuple' in args ? args.tuple : [args];
      v = percentFormat(v, list);
    }
    return v;
  }

  expression(): PyValue {
    let v = this.term();
    while (isOp(this.tokens[this.at], '+')) {
      this.at++;
      const w = this.term();
      if (typeof v !== 'string' || typeof w !== 'string') this.fail('+ of values that are not both str is not read here');
      v = v + w;
    }
    return v;
  }

  whole(): PyValue {
    const v = this.expression();
    if (this.at !== this.tokens.length) this.fail('the expression goes on past what is read here');
    return v;
  }
}

/**
 * Evaluates one expression of tokens: string literals (adjacent ones joined),
 * ints, True/False/None, names bound in `env`, `+` of strs, `str % tuple`,
 * subscripts of dicts, and tuple, list and dict displays. Throws
 * PythonSourceError on anything else.
 */
export function evaluate(tokens: readonly Token[], env: ReadonlyMap<string, PyValue>): PyValue {
  return new ExpressionReader(tokens, env).whole();
}

/**
 * Every top-level `NAME = <expression>` that `evaluate` can read, in order,
 * each seeing the names bound before it. A name last assigned something that
 * cannot be read is left out.
 */
export function moduleValues(lines: readonly PyLine[]): Map<string, PyValue> {
  const env = new Map<string, PyValue>();
  for (const { tokens, indent } of lines) {
    if (indent !== 0 || !isName(tokens[0]) || !isOp(tokens[1], '=')) continue;
    const name = (tokens[0] as { text: string }).text;
    try {
      env.set(name, evaluate(tokens.slice(2), env));
    } catch (e) {
      if (!(e instanceof PythonSourceError)) throw e;
      env.delete(name);
    }
  }
  return env;
}

/** The lines of the body of `def name(...)` (or `async def`), at any depth; null when there is none. */
export function functionBody(lines: readonly PyLine[], name: string): PyLine[] | null {
  const start = lines.findIndex(({ tokens: t }) => {
    const def = isName(t[0], 'async') ? 1 : 0;
    return isName(t[def], 'def') && isName(t[def + 1], name);
  });
  if (start < 0) return null;
  const indent = lines[start]!.indent;
  const body: PyLine[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.indent <= indent) break;
    body.push(line);
  }
  return body;
}
