#!/usr/bin/env python3
"""Validates every gpu-db file against its JSON Schema (gpu-db/schema/*.schema.json).

usage: check_schemas.py GPU_DB_DIR

The schemas document the formats for contributors and editors; the binding check is `ftcost db check`
(core/dbcheck/). This test keeps the two in step: every shipped file must pass its schema, and
every schema must itself be a valid JSON Schema. Exits 77 (ctest: skipped) when the jsonschema module is missing.
"""
import json
import sys
from pathlib import Path

try:
    import jsonschema
except ImportError:
    print("skipped: python3 module jsonschema is not installed")
    sys.exit(77)

FOLDERS = {
    "gpus": "gpu",
    "prices": "prices",
    "models": "model",
    "datasets": "dataset",
    "nodes": "node",
    "stacks": "stack",
}


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    db = Path(argv[0])
    validators = {}
    for path in sorted((db / "schema").glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validators[path.name[: -len(".schema.json")]] = cls(schema)
    failures = 0
    checked = 0
    targets = [(p, kind) for folder, kind in FOLDERS.items() for p in sorted((db / folder).glob("*.json"))]
    targets += [(p, "calibration") for p in sorted((db / "calibrations").glob("*/*.json"))]
    targets += [(p, "run") for p in sorted((db / "runs").glob("*/*.json"))]
    for path, kind in targets:
        if kind not in validators:
            print(f"{path}: no schema {kind}.schema.json")
            failures += 1
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        errors = sorted(validators[kind].iter_errors(doc), key=lambda e: list(e.path))
        for e in errors[:5]:
            where = ".".join(str(x) for x in e.path) or "(top level)"
            print(f"{path}: {where}: {e.message[:300]}")
        failures += bool(errors)
        checked += 1
    print(f"check_schemas: {checked} files, {failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
