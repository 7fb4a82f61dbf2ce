"""Regenerates the golden ``*.expected.json`` next to each recorded payload (review the diff!).

Run: ``.venv/bin/python -m tests.adapters.contract.golden``.
"""

from __future__ import annotations

import json

from tests.adapters.contract.cases import CASES, inbound_as_json


def write_goldens() -> int:
    written = 0
    for case in CASES:
        for payload_path in sorted(case.payload_dir.glob("*.json")):
            if payload_path.name.endswith(".expected.json"):
                continue
            expected = inbound_as_json(case.convert(json.loads(payload_path.read_text(encoding="utf-8"))))
            target = payload_path.with_name(payload_path.stem + ".expected.json")
            target.write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            written += 1
    return written


if __name__ == "__main__":
    print(f"wrote {write_goldens()} golden files")
