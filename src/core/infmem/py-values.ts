/**
 * Python values as InfMem's official code holds them (JSON it decodes, dict
 * literals it writes) and how Python prints them: `repr` of a string, `str()`
 * of a decoded JSON value, `json.dumps(..., ensure_ascii=False)`.
 */

/** A Python value: str, int (bigint), float, bool, None, list, tuple or a dict with str keys. */
export type PyValue = string | bigint | number | boolean | null | PyValue[] | PyTuple | PyDict;
export interface PyTuple {
  tuple: PyValue[];
}
export type PyDict = Map<string, PyValue>;

function isTuple(v: PyValue): v is PyTuple {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map);
}

/** Characters `str.isprintable()` refuses, other than the space: Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs. */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function hexEscape(code: number): string {
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}

/** `repr(s)` of a str: its quote chosen as Python chooses it, and its escapes. */
export function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  // By code point: a lone surrogate is one character of its own, as in Python.
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) out += hexEscape(code);
    else out += ch;
  }
  return out + quote;
}

/** `repr(x)` of a float: the shortest digits that read back, in Python's layout (`5.0`, `1e-05`, `1e+16`, `inf`). */
export function pyReprFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = x.toExponential().split('e') as [string, string];
  const e = Number(exp);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace(/^-/, '').replace('.', '');
  if (e < -4 || e >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${head}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  const whole = digits.slice(0, e + 1).padEnd(e + 1, '0');
  const frac = digits.slice(e + 1);
  return `${sign}${whole}.${frac || '0'}`;
}

/** `repr(v)`. */
export function pyRepr(v: PyValue): string {
  if (typeof v === 'string') return pyReprString(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return pyReprFloat(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null) return 'None';
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (isTuple(v)) return v.tuple.length === 1 ? `(${pyRepr(v.tuple[0]!)},)` : `(${v.tuple.map(pyRepr).join(', ')})`;
  return `{${[...v].map(([k, x]) => `${pyReprString(k)}: ${pyRepr(x)}`).join(', ')}}`;
}

/** `str(v)`, as an f-string's `{v}` prints it: a str as it is, anything else as its repr. */
export function pyStr(v: PyValue): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** `json.dumps(v, ensure_ascii=False)` with its default separators, keys in the dict's order. */
export function pyJsonDumps(v: PyValue): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : !Number.isFinite(v) ? (v > 0 ? 'Infinity' : '-Infinity') : pyReprFloat(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(pyJsonDumps).join(', ')}]`;
  if (isTuple(v)) return `[${v.tuple.map(pyJsonDumps).join(', ')}]`;
  return `{${[...v].map(([k, x]) => `${JSON.stringify(k)}: ${pyJsonDumps(x)}`).join(', ')}}`;
}

/** Text that `json.loads` refuses. */
export class PyJsonError extends Error {
  override name = 'PyJsonError';
}

const NUMBER = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/;
// A JSON string: no raw control character inside (Python's strict mode refuses them, as JSON.parse does).
const STRING = new RegExp(`^"(?:[^"\\\\${String.fromCharCode(0)}-${String.fromCharCode(0x1f)}]|\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4}))*"`);
const JSON_SPACE = /^[ \t\n\r]*/;

const WORDS: readonly (readonly [string, PyValue])[] = [
  ['null', null],
  ['true', true],
  ['false', false],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
];

/** A reader of one JSON text (see `pyJsonLoads`). */
class JsonReader {
  private at = 0;

  constructor(private readonly text: string) {}

  private space(): void {
    this.at += JSON_SPACE.exec(this.text.slice(this.at))![0].length;
  }

  private fail(what: string): never {
    throw new PyJsonError(`${what} at character ${this.at}`);
  }

  value(): PyValue {
    this.space();
    const rest = this.text.slice(this.at, this.at + 16);
    const word = WORDS.find(([w]) => rest.startsWith(w));
    if (word) {
      this.at += word[0].length;
      return word[1];
    }
    const c = this.text[this.at];
    if (c === '"') return this.string();
    if (c === '[') return this.list();
    if (c === '{') return this.dict();
    const n = NUMBER.exec(this.text.slice(this.at)) ?? this.fail('Expecting value');
    this.at += n[0].length;
    return n[1] === undefined && n[2] === undefined ? BigInt(n[0]) : Number(n[0]);
  }

  private string(): string {
    const m = STRING.exec(this.text.slice(this.at)) ?? this.fail('Unterminated or invalid string');
    this.at += m[0].length;
    return JSON.parse(m[0]) as string;
  }

  /** The items of a list or dict up to `close`, each read by `item`. */
  private items(close: string, item: () => void): void {
    this.at++;
    this.space();
    if (this.text[this.at] === close) {
      this.at++;
      return;
    }
    for (;;) {
      item();
      this.space();
      const c = this.text[this.at++];
      if (c === close) return;
      if (c !== ',') this.fail("Expecting ',' delimiter");
    }
  }

  private list(): PyValue[] {
    const out: PyValue[] = [];
    this.items(']', () => out.push(this.value()));
    return out;
  }

  private dict(): PyDict {
    const out: PyDict = new Map();
    this.items('}', () => {
      this.space();
      if (this.text[this.at] !== '"') this.fail('Expecting property name enclosed in double quotes');
      const key = this.string();
      this.space();
      if (this.text[this.at++] !== ':') this.fail("Expecting ':' delimiter");
      out.set(key, this.value());
    });
    return out;
  }

  whole(): PyValue {
    const v = this.value();
    this.space();
    if (this.at !== this.text.length) this.fail('Extra data');
    return v;
  }
}

/**
 * `json.loads(text)`, keeping what JSON.parse loses: an integer stays an
 * exact int (`5` apart from `5.0`), and `NaN`, `Infinity`, `-Infinity` are
 * read as Python reads them. Duplicate keys keep the last value.
 */
export function pyJsonLoads(text: string): PyValue {
  return new JsonReader(text).whole();
}
