/**
 * The Python string semantics InfMem's official code relies on, checked
 * against Python itself: repr of a query, str() of a decoded top_k,
 * json.dumps, single-pass str.format, the history text.
 */
import { describe, expect, it } from 'vitest';
import { pyFormat, PyFormatError } from '../src/core/infmem/py-format';
import { pyJsonDumps, pyJsonLoads, PyJsonError, pyReprFloat, pyReprString, pyStr } from '../src/core/infmem/py-values';
import { historyText } from '../src/core/infmem/planner-state';
import { hasPython, runPython } from './support/python';

const STRINGS = [
  'Eiffel Tower location',
  'Gustave\'s "tower"\ncity',
  "it's",
  'say "hi"',
  'both \' and "',
  'back\\slash\ttab\rcr',
  'bell\x07 nul\x00 del\x7f c1\x85 nbsp\u00a0 ideo\u3000 zwsp\u200b bom\ufeff ls\u2028',
  'emoji 🗼 and 中文 and é',
  'private \ue000 unassigned \u0378 astral-private \u{f0000}',
];

const JSON_ARGS = [
  '5',
  '5.0',
  '"8"',
  'true',
  'false',
  'null',
  '[3, 5]',
  '{"a": 1}',
  '1e2',
  '-0',
  '-0.0',
  '1E-5',
  '12345678901234567890',
  '1e16',
  '0.1',
  'NaN',
  'Infinity',
  '-Infinity',
  '2.5e-7',
  '123456.789',
];

describe.runIf(hasPython)('Python semantics, against python3', () => {
  it('repr of a str: the quote Python picks and its escapes', () => {
    const python = runPython<string[]>('import json,sys; print(json.dumps([repr(s) for s in json.load(sys.stdin)]))', STRINGS);
    expect(STRINGS.map(pyReprString)).toEqual(python);
  });

  it('str() of a JSON value as json.loads decodes it: 5 and 5.0 apart, True, None, lists', () => {
    const python = runPython<string[]>('import json,sys; print(json.dumps([str(json.loads(a)) for a in json.load(sys.stdin)]))', JSON_ARGS);
    expect(JSON_ARGS.map((a) => pyStr(pyJsonLoads(a)))).toEqual(python);
  });

  it('json.loads refuses what Python refuses', () => {
    const bad = ['{"query": "x",}', '{"query": "x"} trailing', "{'query': 'x'}", '', '[1,]', '01', '{"a" 1}'];
    const python = runPython<boolean[]>(
      'import json,sys\ndef ok(a):\n  try:\n    json.loads(a); return True\n  except Exception:\n    return False\nprint(json.dumps([ok(a) for a in json.load(sys.stdin)]))',
      bad,
    );
    expect(python.every((ok) => !ok)).toBe(true);
    for (const a of bad) expect(() => pyJsonLoads(a), a).toThrow(PyJsonError);
  });

  it('json.dumps(ensure_ascii=False) of a schema keeps key order, separators and non-ASCII text', () => {
    const text = '{"type": "object", "properties": {"q": {"description": "é \\"quoted\\" \\n", "minimum": 3, "default": 8}}, "required": ["q"]}';
    const python = runPython<string>('import json,sys; print(json.dumps(json.dumps(json.loads(json.load(sys.stdin)), ensure_ascii=False)))', text);
    expect(pyJsonDumps(pyJsonLoads(text))).toBe(python);
  });

  it('float repr for the layouts Python switches between', () => {
    const xs = [5, 0.1, 1e-5, 0.0001, 1e16, 1e15, 123456.789, 2.5e-7, 1.5e300, -2.0];
    const python = runPython<string[]>('import json,sys; print(json.dumps([repr(float(x)) for x in json.load(sys.stdin)]))', xs);
    expect(xs.map(pyReprFloat)).toEqual(python);
  });

  it('str.format fills each slot once and never reads an inserted value again', () => {
    const template = '{{literal}} Q: {prompt}\nM: {memory}\nH: {retrieval_history}';
    const slots = { prompt: 'has {memory} inside', memory: '{prompt} and {{x}}', retrieval_history: 'h' };
    const python = runPython<string>('import json,sys; a=json.load(sys.stdin); print(json.dumps(a[0].format(**a[1])))', [template, slots]);
    expect(pyFormat(template, slots)).toBe(python);
  });

  it('the history text as the official f-strings write it', () => {
    const history = [
      { query: 'Eiffel Tower location', topK: '5' },
      { query: 'Gustave\'s "tower"\ncity', topK: '8' },
      { query: 'x', topK: pyStr(pyJsonLoads('5.0')) },
    ];
    const script = `import json,sys
a=json.load(sys.stdin)
def text(step, total, history):
    return (f"Current retrieval step: {step+1}  Maximum allowed retrieval steps: {total}\\n"
            + "\\n".join(f"Step {i+1}: query={h['query']!r}, top_k={h['top_k']}" for i, h in enumerate(history)))
print(json.dumps([text(0, 3, []), text(2, 3, [{'query': h['query'], 'top_k': json.loads(h['raw'])} for h in a])]))`;
    const python = runPython<string[]>(script, [
      { query: history[0]!.query, raw: '5' },
      { query: history[1]!.query, raw: '8' },
      { query: 'x', raw: '5.0' },
    ]);
    expect([historyText(0, 3, []), historyText(2, 3, history)]).toEqual(python);
  });
});

describe('str.format errors', () => {
  it('refuses a slot it is not given and a lone brace, as Python does', () => {
    expect(() => pyFormat('{nope}', { prompt: 'q' })).toThrow(PyFormatError);
    expect(() => pyFormat('a } b', {})).toThrow(PyFormatError);
  });

  it('writes the example of the reference text byte for byte', () => {
    const text = historyText(2, 3, [
      { query: 'Eiffel Tower location', topK: '5' },
      { query: 'Gustave\'s "tower"\ncity', topK: '8' },
    ]);
    expect(text).toBe(
      "Current retrieval step: 3  Maximum allowed retrieval steps: 3\nStep 1: query='Eiffel Tower location', top_k=5\nStep 2: query='Gustave\\'s \"tower\"\\ncity', top_k=8",
    );
  });
});
