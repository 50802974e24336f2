/**
 * The planner's reply as InfMem's official code reads it, checked against
 * the same reading done by Python's `re` and `json`, and the stop counter
 * that carries its votes across chunks.
 */
import { describe, expect, it } from 'vitest';
import { parsePlannerReply, removeTrailingComment, retrievalsOf } from '../src/core/infmem/planner-reply';
import { StopCounter } from '../src/core/infmem/planner-state';
import { hasPython, runPython } from './support/python';

const Q = 'Who designed the tower?';

const CASES: Record<string, string> = {
  'a call after a think block':
    '<think>\nThe memory lacks the designer.\n</think>\n\n✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": "tower designer", "top_k": 5}',
  'STOP alone': '<think>\nEnough.\n</think>\n\nSTOP',
  'STOP inside the think text with a call': '<think>\nI should not STOP yet.\n</think>\n\n✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": "x"}',
  'two calls followed by ✿RESULT✿ and a trailing comment':
    '✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": "first", "top_k": 3} (the broad one)\n✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": "second", "top_k": 5.0}\n✿RESULT✿: pending',
  'plain text, no call': '<think>\nHmm.\n</think>\n\nThe memory seems fine.',
  'name and args on one line': '✿FUNCTION✿: retrievesearch ✿ARGS✿: {"query": "one line"}',
  'arguments that are not JSON': "✿FUNCTION✿: retrievesearch\n✿ARGS✿: {'query': 'single quotes'}",
  'another tool and a retrieval': '✿FUNCTION✿: web_search\n✿ARGS✿: {"query": "elsewhere"}\n✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"top_k": 4}',
  'a fenced argument block': '✿FUNCTION✿: retrievesearch\n✿ARGS✿: ```\n{"query": "fenced"}\n```\nthen more words',
  'a query that is not a string': '✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": 42, "top_k": true}',
  'STOPPED counts as a stop': 'Not STOPPED.',
};

// The official reading, written with Python's own re, json and str semantics.
const PY_PARSER =
  String.raw`
import json, re, sys
FN_NAME, FN_ARGS, FN_RESULT, FN_EXIT = '✿FUNCTION✿', '✿ARGS✿', '✿RESULT✿', '✿RETURN✿'
def trailing(a):
    a = a.strip()
    if a.startswith('{'):
        k = a.rfind('}')
        if k > 0: a = a[:k + 1]
    if a.startswith('` +
  '```' +
  String.raw`'):
        k = a.rfind('\n` +
  '```' +
  String.raw`')
        if k > 0: a = a[:k + 4]
    return a
def parse(text, q):
    if "STOP" in text:
        return {"stop": True, "calls": [], "retrievals": []}
    pattern = f'{re.escape(FN_NAME)}:\\s*([^\\n]+)\\s*{re.escape(FN_ARGS)}:\\s*([^✿]+?)(?={re.escape(FN_RESULT)}|{re.escape(FN_EXIT)}|{re.escape(FN_NAME)}|$)'
    calls = [{"name": m.group(1).strip(), "arguments": trailing(m.group(2).strip())} for m in re.finditer(pattern, text, re.DOTALL)]
    retrievals = []
    for c in calls:
        if c["name"] != "retrievesearch": continue
        try:
            args = json.loads(c["arguments"])
            query = args.get("query", q)
            top_k = args.get("top_k", 8)
            if not isinstance(query, str): raise TypeError
        except Exception:
            query, top_k = q, 8
        retrievals.append({"query": query, "topK": str(top_k)})
    return {"stop": False, "calls": calls, "retrievals": retrievals}
a = json.load(sys.stdin)
print(json.dumps({k: parse(v, a["q"]) for k, v in a["cases"].items()}))
`;

describe('the planner reply', () => {
  it.runIf(hasPython)('is read as Python reads it, case by case', () => {
    const python = runPython<Record<string, unknown>>(PY_PARSER, { q: Q, cases: CASES });
    for (const [name, text] of Object.entries(CASES)) {
      const reply = parsePlannerReply(text);
      const retrievals = retrievalsOf(reply, Q).map(({ query, topK }) => ({ query, topK }));
      expect({ ...reply, retrievals }, name).toEqual(python[name]);
    }
  });

  it('is a stop wherever STOP appears, the thinking included, and then has no calls', () => {
    expect(parsePlannerReply(CASES['STOP inside the think text with a call']!)).toEqual({ stop: true, calls: [] });
    expect(parsePlannerReply(CASES['STOP alone']!).stop).toBe(true);
  });

  it('keeps every call, the last one included, with the comment after the JSON cut off', () => {
    const reply = parsePlannerReply(CASES['two calls followed by ✿RESULT✿ and a trailing comment']!);
    expect(reply.calls).toEqual([
      { name: 'retrievesearch', arguments: '{"query": "first", "top_k": 3}' },
      { name: 'retrievesearch', arguments: '{"query": "second", "top_k": 5.0}' },
    ]);
    expect(retrievalsOf(reply, Q).map((r) => r.topK)).toEqual(['3', '5.0']);
  });

  it('falls back to the question and top_k 8 on arguments it cannot read, and says why', () => {
    const [r] = retrievalsOf(parsePlannerReply(CASES['arguments that are not JSON']!), Q);
    expect(r).toMatchObject({ query: Q, topK: '8' });
    expect(r!.fallback).toMatch(/not JSON/);
    expect(removeTrailingComment('```\n{"query": "fenced"}\n```\nthen more words')).toBe('```\n{"query": "fenced"}\n```');
  });
});

describe('the stop counter', () => {
  const run = (limit: number, votes: [stop: boolean, calls: number][]) => {
    const counter = new StopCounter(limit);
    return votes.map(([stop, calls]) => counter.vote(stop, calls));
  };

  it('ends the read at the third vote in a row with three, votes carrying across chunks', () => {
    expect(
      run(3, [
        [true, 0],
        [true, 0],
        [true, 0],
      ]),
    ).toEqual([false, false, true]);
  });

  it('is reset by a reply with a call, and counts a reply with no call as a vote', () => {
    expect(
      run(3, [
        [true, 0],
        [false, 1],
        [false, 0],
        [true, 0],
        [true, 0],
      ]),
    ).toEqual([false, false, false, false, true]);
  });

  it('with one, ends the read at the first vote', () => {
    expect(run(1, [[true, 0]])).toEqual([true]);
    expect(run(1, [[false, 0]])).toEqual([true]);
    expect(run(1, [[false, 2]])).toEqual([false]);
  });

  it('refuses a count below one', () => {
    expect(() => new StopCounter(0)).toThrow(RangeError);
  });
});
