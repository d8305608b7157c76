#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from what the repository already holds, so no copies are
checked in: series files (tests/series, experiments, recorded runs, and the series written inline
in the end-to-end tests), guesses (from those series, docs/expectations.md and the plugins), native
trace files and results.json of the recorded runs (tests/data); a few series that sweep with
range(), pow2() and --axis at ordinary sizes and at the edge of 64-bit integers, so that mutations
(and the words of fuzz/series.dict) reach the generators; and the inputs that found something, kept in
fuzz/known/TARGET/. The run_dir target starts from the results.json seeds.

    fuzz/seeds.py OUT_DIR      # makes OUT_DIR/{series,expect,trace,results,run_dir}/, one file per seed
"""
import hashlib
import json
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
COMPARISON = re.compile(r"==|!=|<|>|~")


def save(folder: pathlib.Path, text: bytes) -> None:
    # Named by content, as libFuzzer names what it adds, so the same seed is written once.
    (folder / hashlib.sha1(text).hexdigest()).write_bytes(text)


def series_texts():
    files = [*ROOT.glob("tests/series/*.yaml"), *ROOT.glob("experiments/*.yaml"), *ROOT.glob("tests/data/*/series.yaml")]
    for f in files:
        yield f.read_text()
    # The end-to-end tests write series inline, many of them broken on purpose.
    for f in ROOT.glob("tests/e2e/*.cpp"):
        for raw in re.findall(r'R"\((.*?)\)"', f.read_text(), re.S):
            if "series:" in raw or "experiments:" in raw:
                yield raw


def generator_texts():
    """Sweeps written with each generator, in the file and as --axis lines (series_fuzz.cpp reads
    lines starting with "# --axis "), with ordinary bounds and with bounds at the edge of the
    64-bit integers the generators count in (a few values each, valid as they stand), so that one
    digit's mutation takes a generator past the edge."""
    edges = ("pow2(1, 4611686018427387903)", "range(9223372036854775800, 9223372036854775807, 1)")
    for axis in ("pow2(256, 8192)", "range(512, 8192, 512)", "[1, 2, 4]", *edges):
        yield f"series: sweep\nexperiments:\n  - name: sums\n    plugin: faulty\n    axes:\n      size: {axis}\n"
    for option in ("size=pow2(1,64)", "size=range(1,9,2)", "size=1,2,3", *(f"size={axis.replace(' ', '')}" for axis in edges)):
        yield f"# --axis {option}\nseries: sweep\nexperiments:\n  - {{name: sums, plugin: faulty}}\n"


def guesses_in(document):
    """Every check written under an `expect:` key, at any depth."""
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "expect" and isinstance(value, list):
                for item in value:
                    if isinstance(item, str):
                        yield item
                    elif isinstance(item, dict) and isinstance(item.get("check"), str):
                        yield item["check"]
            else:
                yield from guesses_in(value)
    elif isinstance(document, list):
        for item in document:
            yield from guesses_in(item)


def guess_texts(series):
    for text in series:
        try:
            yield from guesses_in(yaml.safe_load(text))
        except yaml.YAMLError:
            pass  # the broken series of the tests
    docs = (ROOT / "docs/expectations.md").read_text()
    for code in re.findall(r"`([^`\n]+)`", docs):
        if COMPARISON.search(code):
            yield code
    for block in re.findall(r"```yaml\n(.*?)```", docs, re.S):
        yield from guesses_in(yaml.safe_load(block))
    # A plugin's guesses() returns {"check", "why"} pairs.
    for f in [*ROOT.glob("plugins/**/*.cpp"), *ROOT.glob("tests/plugins/*.cpp")]:
        for literal in re.findall(r'\{\s*"((?:[^"\\]|\\.)*)"\s*,\s*"', f.read_text()):
            check = literal.encode().decode("unicode_escape")
            if COMPARISON.search(check):
                yield check


def shortened(value, most=3):
    """`value` with every list cut to its first `most` items, at any depth."""
    if isinstance(value, dict):
        return {k: shortened(v, most) for k, v in value.items()}
    if isinstance(value, list):
        return [shortened(v, most) for v in value[:most]]
    return value


def results_texts():
    """Each recorded results.json with every list cut to three items (experiments, guesses, timing
    samples, ...): every kind of field is still there, and the whole files (up to 800 KB) would
    make each execution take 25 ms, so that a million of them would take a week-end."""
    for f in ROOT.glob("tests/data/*/results.json"):
        yield json.dumps(shortened(json.loads(f.read_text())), indent=1)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    corpora = {name: out / name for name in ("series", "expect", "trace", "results", "run_dir")}
    for folder in corpora.values():
        folder.mkdir(parents=True, exist_ok=True)
    series = list(series_texts())
    for text in [*series, *generator_texts()]:
        save(corpora["series"], text.encode())
    for check in guess_texts(series):
        save(corpora["expect"], check.encode())
    for f in ROOT.glob("tests/data/*/experiments/*/expr_trace.json"):
        save(corpora["trace"], f.read_bytes())
    for text in results_texts():
        save(corpora["results"], text.encode())
        save(corpora["run_dir"], text.encode())
    for name, folder in corpora.items():
        for f in (ROOT / "fuzz/known" / name).glob("*"):
            save(folder, f.read_bytes())
    for name, folder in corpora.items():
        print(f"seeds: {name}: {sum(1 for _ in folder.iterdir())} files in {folder}")


if __name__ == "__main__":
    main()
