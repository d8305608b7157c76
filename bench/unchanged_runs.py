#!/usr/bin/env python3
"""Is the gate green when nothing changed? An A/A test of expr's defaults (issue 23).

Runs SERIES N times unchanged, each run recorded in one history that starts empty (no `expr
calibrate`, so every run knows only its own timing rounds and the runs before it), then compares
pairs of runs with `expr compare` and its defaults: consecutive pairs (1-2, 2-3, ...) or every pair.
With --gated, every run after the first is `expr run --baseline @last` instead, the gate a nightly
job runs, which measures once more what it called slower before it decides; its comparison is
counted. Prints each pair's gate verdict and what it called its figures, then the totals: pairs
whose gate failed, and figures called slower or faster out of all compared. Exits 1 when a gate
failed.

  python3 bench/unchanged_runs.py SERIES [--runs 8] [--pairs consecutive|all | --gated] [--expr PATH]
                                  [--out DIR] [-- EXPR RUN OPTIONS...]

The figures are for docs/gates-measured.md, from the machine they name; nothing here asserts that
a machine is quiet enough.
"""
import argparse
import itertools
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The comparison's last line, e.g. "no regression, the gate passes: 0 slower, 0 faster, 7 same, 7
# inconclusive (...)" or "REGRESSION, the gate fails: 1 slower, ...".
VERDICTS = re.compile(r"the gate (passes|fails): (\d+) slower, (\d+) faster, (\d+) same, (\d+) inconclusive")


def run(expr, series, run_dir, history, extra, gated):
    started = time.monotonic()
    done = subprocess.run([expr, "run", series, "--out", run_dir, "--force", "--history", history, *(["--baseline", "@last"] if gated else []),
                           *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - started
    # 1: a required guess contradicted, which an unchanged series does every time if at all; a
    # failed experiment (3) has no figures to compare; 5: the gate failed, counted by the caller.
    if done.returncode not in ((0, 1, 5) if gated else (0, 1)):
        sys.exit(f"unchanged_runs: expr run {series} exited {done.returncode}:\n{done.stdout[-3000:]}")
    return wall, done


def verdicts(what, done, exits):
    found = VERDICTS.search(done.stdout)
    if done.returncode not in exits or not found:
        sys.exit(f"unchanged_runs: {what} exited {done.returncode} without a gate verdict:\n{done.stdout[-3000:]}")
    gate, slower, faster, same, inconclusive = found.groups()
    return {"exit": done.returncode, "fails": gate == "fails", "slower": int(slower), "faster": int(faster), "same": int(same),
            "inconclusive": int(inconclusive), "output": done.stdout}


def compare(expr, base, new, history):
    done = subprocess.run([expr, "compare", base, new, "--history", history], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return verdicts(f"expr compare {base} {new}", done, (0, 5))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("series")
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--pairs", choices=["consecutive", "all"], default="consecutive")
    p.add_argument("--gated", action="store_true", help="each run after the first gated by expr run --baseline @last (consecutive pairs)")
    p.add_argument("--expr", default=os.path.join(os.path.dirname(HERE), "build", "bin", "expr"))
    p.add_argument("--out", help="where the runs and their history go (default: a temporary directory, removed)")
    p.add_argument("run_options", nargs="*", help="passed to every expr run (after --)")
    a = p.parse_args()
    if a.runs < 2:
        p.error("--runs: at least 2")
    if a.gated and a.pairs != "consecutive":
        p.error("--gated gates each run against the one before it: consecutive pairs only")
    with tempfile.TemporaryDirectory() as scratch:
        out = a.out or scratch
        os.makedirs(out, exist_ok=True)
        history = os.path.join(out, "history.sqlite")
        if os.path.exists(history):
            os.remove(history)  # the test is of a history that starts empty
        dirs = [os.path.join(out, f"run-{k}") for k in range(1, a.runs + 1)]
        pairs = list(zip(range(a.runs - 1), range(1, a.runs))) if a.pairs == "consecutive" else list(itertools.combinations(range(a.runs), 2))
        failed = called = compared = 0
        for j, d in enumerate(dirs):
            wall, done = run(a.expr, a.series, d, history, a.run_options, a.gated and j > 0)
            print(f"run {j + 1}: {wall:.1f} s, exit {done.returncode}", flush=True)
            # Compared as a nightly job compares, as soon as the later run exists: the history then
            # holds the runs up to it, not those after.
            for i in [i for i, later in pairs if later == j]:
                c = verdicts(f"expr run {a.series} --baseline @last", done, (0, 1, 5)) if a.gated else compare(a.expr, dirs[i], d, history)
                figures = c["slower"] + c["faster"] + c["same"] + c["inconclusive"]
                failed += c["fails"]
                called += c["slower"] + c["faster"]
                compared += figures
                print(f"compare run {i + 1} with run {j + 1}: exit {c['exit']}, gate {'FAILS' if c['fails'] else 'passes'}: "
                      f"{c['slower']} slower, {c['faster']} faster, {c['same']} same, {c['inconclusive']} inconclusive", flush=True)
                for row in c["output"].splitlines():  # the timings called slower or faster, and structural changes
                    if re.search(r"(slower|faster|regression|improvement)$", row.strip()):
                        print("  " + row.strip())
        share = 100.0 * called / compared if compared else 0.0
        print(f"{a.series}, {a.runs} unchanged runs, {len(pairs)} {a.pairs} pairs{' gated by expr run --baseline' if a.gated else ''}: {failed} gate failures; "
              f"{called} of {compared} figures called slower or faster ({share:.1f}%)")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
