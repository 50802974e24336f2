"""The requests InfMem's official evaluation sends, for the tests to compare the
app's with: a read of given chunks and units with scripted replies, rendered from
a prompt file's own constants and functions (the tests give stand-ins of the same
shape) with Python's str.format, repr, json and re. Input and output are JSON on
stdin and stdout."""
import ast
import json
import math
import re
import sys
import typing


def module_parts(path, functions):
    """The file's top-level constants (as Python computes them) and the named functions, defined."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    env = {"json": json, "Dict": typing.Dict, "Literal": typing.Literal}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            try:
                exec(compile(ast.Module([node], []), path, "exec"), env)
            except NameError:
                pass
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in functions:
            exec(compile(ast.Module([node], []), path, "exec"), env)
    return env, tree


def think_close(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncFunctionDef) and node.name == "call_llm_text":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.BinOp) and isinstance(sub.value.right, ast.Constant):
                    return sub.value.right.value
    raise ValueError("no closing words")


def bm25_scores(corpus, query, k1=1.5, b=0.75, epsilon=0.25):
    n = len(corpus)
    avgdl = sum(len(d) for d in corpus) / n
    freqs = [{} for _ in corpus]
    nd = {}
    for f, doc in zip(freqs, corpus):
        for w in doc:
            f[w] = f.get(w, 0) + 1
        for w in f:
            nd[w] = nd.get(w, 0) + 1
    idf = {w: math.log(n - c + 0.5) - math.log(c + 0.5) for w, c in nd.items()}
    eps = epsilon * (sum(idf.values()) / len(idf))
    idf = {w: (eps if v < 0 else v) for w, v in idf.items()}
    scores = [0.0] * n
    for q in query:
        for d in range(n):
            tf = freqs[d].get(q) or 0
            scores[d] += (idf.get(q) or 0) * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(corpus[d]) / avgdl)))
    return scores


def main():
    a = json.load(sys.stdin)
    inf, inf_tree = module_parts(a["infmem"], {"get_bm25search_tool_schema"})
    fn, _ = module_parts(a["fncall"], {"get_function_description"})
    close = think_close(inf_tree)
    functions = [inf["get_bm25search_tool_schema"]()["function"]]
    tool_system = fn["FN_CALL_TEMPLATE"]["en_parallel"].format(
        tool_descs="\n\n".join(fn["get_function_description"](f, lang="en") for f in functions),
        tool_names=",".join(f.get("name_for_model", f.get("name", "")) for f in functions),
    )
    replies = iter(a["replies"])
    requests = []

    def chat(user, system=None):
        text = f"<|im_start|>system\n{system}<|im_end|>\n" if system is not None else ""
        text += f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
        return text if a["thinking"] else text + "<think>\n\n</think>\n\n"

    def call(text):
        if not a["thinking"]:
            requests.append({"prompt": text, "max_tokens": 1024})
            return next(replies)
        requests.append({"prompt": text, "max_tokens": 1024})
        think = next(replies)
        if "</think>" not in think:
            think = think.rstrip() + close
        requests.append({"prompt": text + think, "max_tokens": max(1, 1024)})
        return (think + next(replies).strip()).strip()

    def solution(text):
        return text if "</think>" not in text else text.split("</think>")[-1].strip()

    q = a["question"].strip()
    units = a["units"]
    corpus = [u["text"].lower().split() for u in units]
    memory, history, stop_time, step = inf["NO_MEMORY"], [], 0, len(a["chunks"])
    pattern = "✿FUNCTION✿:\\s*([^\\n]+)\\s*✿ARGS✿:\\s*([^✿]+?)(?=✿RESULT✿|✿RETURN✿|✿FUNCTION✿|$)"
    for t, chunk in enumerate(a["chunks"]):
        hist = f"Current retrieval step: {t+1}  Maximum allowed retrieval steps: {len(a['chunks'])}\n" + "\n".join(
            f"Step {i+1}: query={h['query']!r}, top_k={h['top_k']}" for i, h in enumerate(history))
        raw = call(chat(inf["TEMPLATE_CALL_OR_ANSWER"].format(prompt=q, memory=memory, retrieval_history=hist), tool_system))
        stop = "STOP" in raw
        calls = [] if stop else [(m.group(1).strip(), m.group(2).strip()) for m in re.finditer(pattern, raw, re.DOTALL)]
        if not stop:
            stop_time = 0
        if stop or not calls:
            stop_time += 1
            if stop_time >= a["early_stop"]:
                step = t + 1
                break
        retrieved = ""
        for name, args in calls:
            if name != "retrievesearch":
                continue
            args = args[: args.rfind("}") + 1] if args.startswith("{") and args.rfind("}") > 0 else args
            try:
                parsed = json.loads(args)
                query, top_k = parsed.get("query", q), parsed.get("top_k", 8)
            except Exception:
                query, top_k = q, 8
            history.append({"query": query, "top_k": top_k})
            scores = bm25_scores(corpus, query.lower().split())
            ranked = sorted(range(len(units)), key=lambda i: (-scores[i], i))[:4]
            retrieved = "\n\n".join(f"[Retrieved #{r+1}] {units[i]['text']}" for r, i in enumerate(ranked))
        writer = inf["TEMPLATE_RETREIVE_RECURRENT"].format(prompt=q, retrieval_history=hist, retrieve=retrieved, chunk=chunk, memory=memory)
        memory = solution(call(chat(writer)))
    final = solution(call(chat(inf["TEMPLATE_FINAL"].format(prompt=q, memory=memory))))
    print(json.dumps({"requests": requests, "final": final, "step": step, "memory": memory, "tool_system": tool_system, "close": close}))


main()
