#!/usr/bin/env python3
"""Validates the files CI dashboards and tools read, wherever the test suite left them.

  check_outputs.py SCHEMAS_DIR ROOT...

Every results.json under the roots against schemas/expr.results-2.schema.json (JSON Schema
2020-12, with Debian's python3-jsonschema), every across.json (`expr across --json`) against
schemas/expr.across-1.schema.json, and every junit.xml against schemas/junit.xsd with
xmllint (Debian's libxml2-utils), its counts against its own test cases. First it shows that both
validators reject what they must, so a pass means something. Exits non-zero on any problem.
"""
import copy
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SKIPPED = 77  # ctest's SKIP_RETURN_CODE for this test

try:
    import jsonschema
except ImportError:
    jsonschema = None


def results_problems(validator, document):
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in validator.iter_errors(document)]


def junit_problems(xsd, file):
    problems = []
    run = subprocess.run(["xmllint", "--noout", "--schema", str(xsd), str(file)], capture_output=True, text=True)
    if run.returncode != 0:
        problems.append(run.stderr.strip())
        return problems
    root = ET.parse(file).getroot()
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "errors": sum(1 for c in cases if c.find("error") is not None),
            "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        }
        for key, n in counts.items():
            if int(suite.get(key)) != n:
                problems.append(f"testsuite {suite.get('name')}: {key}={suite.get(key)} but {n} test cases say so")
        for key in totals:
            totals[key] += counts[key]
    for key, n in totals.items():
        if int(root.get(key)) != n:
            problems.append(f"testsuites: {key}={root.get(key)} but its suites add up to {n}")
    return problems


def self_check(validator, across_validator, xsd, sample, across_sample):
    """The validators must reject a broken file, or their passes prove nothing."""
    broken = copy.deepcopy(across_sample)
    broken["guesses"].append({"subject": "x", "check": "y", "required": False, "differs": "yes", "runs": [None, None]})
    assert results_problems(across_validator, broken), "the across schema accepts a guess whose differs is not a boolean"
    broken = copy.deepcopy(across_sample)
    broken["runs"] = broken["runs"][:1]
    assert results_problems(across_validator, broken), "the across schema accepts a view of one run"
    broken = copy.deepcopy(sample)
    broken["experiments"][0]["status"] = "fine"
    assert results_problems(validator, broken), "the schema accepts an unknown status"
    broken = copy.deepcopy(sample)
    del broken["summary"]
    assert results_problems(validator, broken), "the schema accepts a results.json without its summary"
    with tempfile.TemporaryDirectory() as tmp:
        for text, what in [
            ('<testsuites tests="1" failures="0" errors="0" skipped="0"><testsuite name="a" tests="1" failures="0" errors="0" skipped="0">'
             '<testcase classname="a" name="b"/></testsuite></testsuites>', "skipped on testsuites"),
            ('<testsuites tests="1" failures="0" errors="0"><testsuite name="a">'
             '<testcase classname="a" name="b"/></testsuite></testsuites>', "a testsuite without its counts"),
        ]:
            file = pathlib.Path(tmp) / "junit.xml"
            file.write_text(text)
            assert junit_problems(xsd, file), f"schemas/junit.xsd accepts {what}"


def main():
    missing = [what for what, there in [("python3-jsonschema", jsonschema), ("xmllint (libxml2-utils)", shutil.which("xmllint"))] if not there]
    if missing:
        # The GPU machine builds from staged packages (.deps/env.sh) and has neither; everywhere
        # else scripts/install-deps installs both, and their absence is a failure.
        print(f"missing {' and '.join(missing)}: scripts/install-deps installs them")
        return SKIPPED if os.environ.get("EXPR_DEPS") else 1
    schemas = pathlib.Path(sys.argv[1])
    roots = [pathlib.Path(r) for r in sys.argv[2:]]
    schema = json.loads((schemas / "expr.results-2.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    across_schema = json.loads((schemas / "expr.across-1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(across_schema)
    across_validator = jsonschema.Draft202012Validator(across_schema)
    xsd = schemas / "junit.xsd"

    results = sorted(f for root in roots for f in root.rglob("results.json"))
    views = sorted(f for root in roots for f in root.rglob("across.json"))
    junits = sorted(f for root in roots for f in root.rglob("junit.xml"))
    if not results or not views or not junits:
        print(f"found {len(results)} results.json, {len(views)} across.json and {len(junits)} junit.xml under {', '.join(map(str, roots))}: "
              "nothing to check")
        return 1
    documents = {file: (validator, json.loads(file.read_text())) for file in results}
    documents.update({file: (across_validator, json.loads(file.read_text())) for file in views})
    self_check(validator, across_validator, xsd, next(d for v, d in documents.values() if v is validator and d.get("experiments")),
               documents[views[0]][1])

    failed = 0
    for file, (checker, document) in documents.items():
        for p in results_problems(checker, document):
            print(f"{file}: {p}")
            failed += 1
    for file in junits:
        for p in junit_problems(xsd, file):
            print(f"{file}: {p}")
            failed += 1
    print(f"{len(results)} results.json against schemas/expr.results-2.schema.json, {len(views)} across.json against "
          f"schemas/expr.across-1.schema.json, {len(junits)} junit.xml against "
          f"schemas/junit.xsd: {failed} problem{'' if failed == 1 else 's'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
