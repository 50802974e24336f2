"""How InfMem's official HotpotQA evaluation (taskutils/memory_eval/ruler_hqa.py
with the api "infmem", and utils/__init__.py) turns each final generation into a
prediction and scores, rewritten here from its description for the tests to
compare the app's scoring with: the loop keeps the generation after its last
</think>; the evaluation strips that, cuts after a </think> again, takes the text
after the last "the answer is", and scores it against the first answer with em,
sub_em and f1, each rounded to two decimals per item, then averages.
Input and output are JSON on stdin and stdout."""
import json
import re
import string
import sys
from collections import Counter


def after_thought(text):
    if "</think>" not in text:
        return text
    return text.split("</think>")[-1].strip()


def answer_in(response):
    response = response.replace("*", "")
    if "the answer is" not in response:
        return None
    tail = response.rsplit("the answer is", 1)[-1].strip()
    for marker in ("<｜Assistant｜>", "<｜end▁of▁sentence｜>"):
        tail = tail.replace(marker, "")
    return tail.strip().strip(".").strip()


def normalized(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def f1_of(prediction, gold):
    p, g = normalized(prediction), normalized(gold)
    if (p in ("yes", "no", "noanswer") or g in ("yes", "no", "noanswer")) and p != g:
        return 0
    same = sum((Counter(p.split()) & Counter(g.split())).values())
    if same == 0:
        return 0
    precision = same / len(p.split())
    recall = same / len(g.split())
    return 2 * precision * recall / (precision + recall)


def item_scores(prediction, gold):
    # One item's metrics as the evaluation records them: each divided by its count of 1 and rounded.
    p, g = normalized(prediction), normalized(gold)
    return {
        "em": round(float(p == g) / 1, 2),
        "sub_em": round(float((g in p) or (p in g)) / 1, 2),
        "f1": round(f1_of(prediction, gold) / 1, 2),
    }


cases = json.load(sys.stdin)
out = []
sums = {"em": [], "sub_em": [], "f1": []}
for case in cases:
    final = after_thought(case["generation"])  # what the loop returns as "final"
    response = final.strip()
    pred = after_thought(response)
    prediction = answer_in(pred) if pred else answer_in(response)
    scores = item_scores(prediction, case["answers"][0]) if prediction else {"em": 0, "sub_em": 0, "f1": 0}
    for k in sums:
        sums[k].append(scores[k])
    out.append({"final": final, "prediction": prediction, **{k: float(v) for k, v in scores.items()}})
averages = {k: round(sum(v) * 100 / len(v), 2) for k, v in sums.items()}
print(json.dumps({"items": out, "averages": averages}, ensure_ascii=False))
