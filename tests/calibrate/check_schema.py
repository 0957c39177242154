#!/usr/bin/env python3
"""Validates calibration JSON files against gpu-db/schema/calibration.schema.json.

usage: check_schema.py SCHEMA VALID_FILE... [--invalid-dir DIR]
Every VALID_FILE must pass. With --invalid-dir, every fixture that DIR/expected.json marks
"schema": true must fail (the schema catches that corruption, not only the C++ loader).
Exits 77 (ctest: skipped) when the jsonschema module is not installed.
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("skipped: python3 module jsonschema is not installed")
    sys.exit(77)


def main(argv):
    invalid_dir = None
    if "--invalid-dir" in argv:
        i = argv.index("--invalid-dir")
        invalid_dir = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    schema_path, files = argv[0], argv[1:]
    with open(schema_path) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    failed = 0
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            failed += 1
            for e in errors[:5]:
                where = "/".join(str(p) for p in e.absolute_path)
                print(f"FAIL {path}: {where}: {e.message[:200]}")
        else:
            print(f"ok   {path}")
    if invalid_dir:
        with open(os.path.join(invalid_dir, "expected.json")) as f:
            expected = json.load(f)
        for name, exp in sorted(expected.items()):
            if not exp.get("schema"):
                continue
            with open(os.path.join(invalid_dir, name)) as f:
                doc = json.load(f)
            if validator.is_valid(doc):
                failed += 1
                print(f"FAIL {name}: the schema accepts it (expected a rejection at {exp['field']})")
            else:
                print(f"ok   {name} rejected by the schema")
    print(f"schema check: {len(files)} documents validated, {failed} problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
