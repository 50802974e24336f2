import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identifyPromptFile, PROMPT_FILES, PromptFileError, promptFileUrl, promptSetFromFile, sha256Hex } from '../src/core/prompt-sets';
import { finalPrompt, renderTemplate, templateProblem, updatePrompt } from '../src/core/prompts';
import { PythonSourceError, readPythonStrings } from '../src/core/python-strings';
import { STANDIN, STANDIN_BOXED, standinSpecs } from './support/prompt-standins';
import { hasPython, runPython } from './support/python';

/** Python's own reading of a module's top-level string constants (the last assignment wins). */
const PY_CONSTANTS = `
import ast, json, sys
out = []
for src in json.load(sys.stdin):
    found = {}
    for node in ast.parse(src).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                found[name] = node.value.value
            else:
                found.pop(name, None)
    out.append(found)
print(json.dumps(out))
`;

describe('reading a Python module’s string constants', () => {
  it('reads TEMPLATE, TEMPLATE_FINAL and NO_MEMORY out of the stand-in file, as Python holds them', () => {
    const strings = readPythonStrings(STANDIN.toString('utf8'));
    const update = strings.get('TEMPLATE')!;
    expect(update).toContain('\n\n<problem> \n{prompt}\n</problem>\n\n<memory>\n{memory}\n</memory>\n\n<section>\n{chunk}\n</section>\n\nUpdated memory:\n');
    expect(update.endsWith('Updated memory:\n')).toBe(true);
    expect(strings.get('TEMPLATE_FINAL')).toContain('"the answer is (your answer)"');
    expect(strings.get('NO_MEMORY')).toBe('No previous memory');
    // Strings inside functions and docstrings are not constants of the module.
    expect([...strings.keys()].sort()).toEqual(['NO_MEMORY', 'TEMPLATE', 'TEMPLATE_FINAL']);
    const boxed = readPythonStrings(STANDIN_BOXED.toString('utf8')).get('TEMPLATE_FINAL')!;
    expect(boxed).toContain('inside \\boxed{{}}.'); // "\\\\boxed{{}}" in the source: one backslash, braces still doubled
  });

  it.runIf(hasPython)('agrees with Python on both stand-in files', () => {
    const sources = [STANDIN.toString('utf8'), STANDIN_BOXED.toString('utf8')];
    const python = runPython<Record<string, string>[]>(PY_CONSTANTS, sources);
    expect(sources.map((s) => Object.fromEntries(readPythonStrings(s)))).toEqual(python);
  });

  it.runIf(hasPython)('decodes every kind of string literal exactly as Python does', () => {
    const piece = fc.constantFrom(
      'plain words ',
      '{prompt}',
      '{{}}',
      'é ✓ 😀',
      '\\n',
      '\\t',
      '\\\\',
      "\\'",
      '\\"',
      '\\x41',
      '\\101',
      '\\0',
      '\\u00e9',
      '\\U0001F600',
      '\\d',
      '\\{',
      '\\\n',
      '\\a\\b\\f\\v\\r',
    );
    const literal = fc.record({
      prefix: fc.constantFrom('', 'r', 'u', 'R', 'U'),
      quote: fc.constantFrom('"', "'", '"""', "'''"),
      pieces: fc.array(piece, { maxLength: 8 }),
      newlines: fc.boolean(),
    });
    const sources = fc.sample(
      fc.record({ a: literal, b: literal, c: literal, crlf: fc.boolean() }).map(({ a, b, c, crlf }) => {
        const lit = (l: typeof a) => {
          const triple = l.quote.length === 3;
          const body = l.pieces.join(triple && l.newlines ? '\n' : '');
          return `${l.prefix}${l.quote}${body}${l.quote}`;
        };
        const src = `# comment "not a string\nA = ${lit(a)}\nB = (${lit(b)}\n     ${lit(c)})\nC = ${lit(a)} ${lit(c)}\ndef f():\n    D = ${lit(b)}\n`;
        return crlf ? src.replace(/\n/g, '\r\n') : src;
      }),
      { numRuns: 300, seed: 15 },
    );
    const python = runPython<Record<string, string>[]>(PY_CONSTANTS, sources);
    sources.forEach((src, i) => expect(Object.fromEntries(readPythonStrings(src)), src).toEqual(python[i]));
  });

  it('leaves out names whose value is not a plain string, and keeps the last assignment', () => {
    const s = readPythonStrings('A = "one"\nA = "two"\nB = f"x{A}"\nC = b"bytes"\nD = "a" + "b"\nE = "x"\nE = 3\nF == "no"\n  G = "indented"\n');
    expect(Object.fromEntries(s)).toEqual({ A: 'two' });
  });

  it('refuses an unterminated literal and an escape Python refuses', () => {
    expect(() => readPythonStrings('A = """never closed\n')).toThrow(PythonSourceError);
    expect(() => readPythonStrings('A = "\\x4"\n')).toThrow(/Truncated \\x escape on line 1/);
  });
});

describe('templates render as str.format renders them', () => {
  it('turns {{ and }} into braces, fills {prompt}/{chunk} like {problem}/{section}, and keeps a lone brace', () => {
    const slots = { problem: 'Q', memory: 'M', section: 'S' };
    expect(renderTemplate('\\boxed{{}} {{prompt}} {prompt}|{problem} {chunk}|{section} {memory}', slots)).toBe('\\boxed{} {prompt} Q|Q S|S M');
    expect(renderTemplate('\\boxed{} stays', slots)).toBe('\\boxed{} stays');
    // Values are never read again: braces and slot names in the book stay as written.
    expect(renderTemplate('<{chunk}>', { section: '{{memory}} {prompt}' })).toBe('<{{memory}} {prompt}>');
  });

  it.runIf(hasPython)('gives what Python’s str.format gives, for templates and values of every shape', () => {
    const piece = fc.constantFrom('{prompt}', '{memory}', '{chunk}', '{{', '}}', '{{}}', '\\boxed{{}}', 'text ', '<problem> \n', '\n\n', 'é');
    const value = fc.string({ unit: fc.constantFrom('a', '{', '}', '{prompt}', '$&', '$1', '\\', '\n', ' ', 'é') });
    const cases = fc.sample(fc.record({ template: fc.array(piece, { maxLength: 12 }).map((p) => p.join('')), prompt: value, memory: value, chunk: value }), {
      numRuns: 300,
      seed: 15,
    });
    const python = runPython<string[]>(
      'import json, sys\nprint(json.dumps([c["template"].format(prompt=c["prompt"], memory=c["memory"], chunk=c["chunk"]) for c in json.load(sys.stdin)]))',
      cases,
    );
    cases.forEach((c, i) => expect(renderTemplate(c.template, { problem: c.prompt, memory: c.memory, section: c.chunk })).toBe(python[i]));
  });

  it('accepts edited templates that spell the slots the official way', () => {
    expect(templateProblem({ update: '{prompt} {memory} {chunk}', final: '{prompt} {memory}' })).toBeNull();
    expect(templateProblem({ update: '{{prompt}} {memory} {chunk}', final: '{prompt} {memory}' })).toMatch(/must contain \{problem\} \(or \{prompt\}\)/);
  });
});

describe('prompt sets read from a pinned file', () => {
  it('builds the set from the stand-in when its hash is the one pinned, with the file recorded', async () => {
    const specs = await standinSpecs();
    const set = await promptSetFromFile(specs[0]!, STANDIN);
    expect(set.id).toBe('memagent');
    expect(set.label).toBe('MemAgent (paper)');
    expect(set.answerStyle).toBe('recurrent');
    expect(set.initialMemory).toBe('No previous memory');
    expect(set.file).toEqual({
      path: 'taskutils/memory_eval/utils/recurrent.py',
      commit: '76b7a658988e4ea53d7388a62de6c0ce79084146',
      sha256: specs[0]!.sha256,
    });
    const boxed = await promptSetFromFile(specs[1]!, STANDIN_BOXED);
    expect(boxed.answerStyle).toBe('recurrent-boxed');
    expect(finalPrompt(boxed.templates, 'Q', 'M')).toContain('inside \\boxed{}.\n\n<problem> \nQ\n</problem>\n\n<memory>\nM\n</memory>\n\nYour answer:\n');
  });

  it.runIf(hasPython)('renders each step byte for byte as the file’s own TEMPLATE.format(...) does', async () => {
    const specs = await standinSpecs();
    const set = await promptSetFromFile(specs[1]!, STANDIN_BOXED);
    const step = { prompt: 'Who wrote {this}?', memory: 'No previous memory', chunk: 'A chunk with {{braces}}, $& and a trailing space ' };
    const [update, final] = runPython<string[]>(
      `import ast, json, sys
c = json.load(sys.stdin)
consts = {n.targets[0].id: n.value.value for n in ast.parse(c["src"]).body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)}
print(json.dumps([consts["TEMPLATE"].format(prompt=c["prompt"], memory=c["memory"], chunk=c["chunk"]), consts["TEMPLATE_FINAL"].format(prompt=c["prompt"], memory=c["memory"])]))`,
      { src: STANDIN_BOXED.toString('utf8'), ...step },
    );
    expect(updatePrompt(set.templates, step.prompt, step.memory, step.chunk)).toBe(update);
    expect(finalPrompt(set.templates, step.prompt, step.memory)).toBe(final);
  });

  it('refuses a file whose hash is not the pinned one, saying so, and uses none of it', async () => {
    const specs = await standinSpecs();
    const edited = Buffer.from(STANDIN.toString('utf8').replace('Stand-in instruction', 'Edited instruction'));
    const refused = await promptSetFromFile(specs[0]!, edited).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PromptFileError);
    expect((refused as PromptFileError).reason).toBe('hash');
    expect((refused as Error).message).toMatch(new RegExp(`recurrent\\.py was refused: its SHA-256 is ${await sha256Hex(edited)}, not ${specs[0]!.sha256}`));
    // The real pins refuse the stand-in too: it is not the official file.
    await expect(promptSetFromFile(PROMPT_FILES[0]!, STANDIN)).rejects.toThrow(/not 1e0082a7a85a97663eb5e747ae7d925c153acab8f403c026b15debd1a1b97e41/);
  });

  it('refuses a file with the right hash that lacks a template', async () => {
    const bytes = Buffer.from('TEMPLATE = "only {prompt} {memory} {chunk}"\n');
    const spec = { ...PROMPT_FILES[0]!, sha256: await sha256Hex(bytes) };
    await expect(promptSetFromFile(spec, bytes)).rejects.toThrow(/holds no string constant TEMPLATE_FINAL, NO_MEMORY/);
  });

  it('tells which pinned file some bytes are, and where each is fetched from', async () => {
    const specs = await standinSpecs();
    expect((await identifyPromptFile(STANDIN_BOXED, specs))?.set).toBe('memagent-boxed');
    expect(await identifyPromptFile(Buffer.from('something else'), specs)).toBeNull();
    expect(promptFileUrl(PROMPT_FILES[0]!)).toBe(
      'https://raw.githubusercontent.com/BytedTsinghua-SIA/MemAgent/76b7a658988e4ea53d7388a62de6c0ce79084146/taskutils/memory_eval/utils/recurrent.py',
    );
    expect(promptFileUrl(PROMPT_FILES[1]!, 'http://mirror.example/memagent/')).toBe(
      'http://mirror.example/memagent/taskutils/memory_eval/utils/recurrent_boxed.py',
    );
  });
});
