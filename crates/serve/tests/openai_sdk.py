"""The `openai` Python package, unchanged, against `pgraphrag serve`.

Usage: python openai_sdk.py BASE_URL KEY
Prints one JSON object: the whole answer (text, finish_reason, the documents it used) and the
streamed one (text assembled from the deltas, finish_reason, the documents of the first chunk).
"""
import json
import sys

from openai import OpenAI

base, key = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base + "/v1", api_key=key, max_retries=0, timeout=120)
ask = dict(
    model="smollm2",
    user="ann",
    messages=[{"role": "user", "content": "Write a one-line review of a lavender soap."}],
    max_tokens=12,
    temperature=0,
    extra_body={"pgraphrag": {"item": "soap", "scope": "both", "k": 2}},
)

whole = client.chat.completions.create(**ask)
out = {
    "whole": {
        "text": whole.choices[0].message.content,
        "finish_reason": whole.choices[0].finish_reason,
        # Fields beyond OpenAI's schema stay on the pydantic model as extras.
        "pgraphrag": (whole.model_extra or {}).get("pgraphrag"),
        "usage": whole.usage.model_dump() if whole.usage else None,
    }
}

text, finish, used, chunks = "", None, None, 0
for chunk in client.chat.completions.create(stream=True, **ask):
    chunks += 1
    extra = (chunk.model_extra or {}).get("pgraphrag")
    if extra is not None and used is None:
        used = extra
    for choice in chunk.choices:
        text += choice.delta.content or ""
        finish = choice.finish_reason or finish
out["stream"] = {"text": text, "finish_reason": finish, "pgraphrag": used, "chunks": chunks}
print(json.dumps(out))
