#!/usr/bin/env python3
"""Does kill -9 at a random point of a long sweep lose anything expr said was done? (issue 32)

Each trial runs a one-axis sweep of the `waiter` test plugin (bench/sweep_scaling.py's series,
N points), reads its progress lines (standard error) as they come, and kills expr with SIGKILL after a random
number of experiments were reported done ("done [k/N] NAME: ok") plus a random few milliseconds,
so the kill lands between experiments or inside one, a journal append included. Then:

  lost       experiments reported done whose result the run directory does not hold: results.json
             with the journal (experiments.jsonl) over it, a last record cut short skipped, as
             docs/running.md tells a tool of one's own to read it (written here independently of
             expr's reader). Must be none.
  resumed    `expr run --resume DIR` exits 0 and the run directory then holds all N.
  re-run     experiments reported done before the kill that the resumed run measured again
             (their timeline changed). Must be none.

  python3 bench/kill_resume.py [--expr BUILD/bin/expr] [--plugins BUILD/tests/plugins/lib]
                               [--points N] [--trials T] [--seed S] [--out DIR]

Prints one line a trial and exits 1 if any trial lost or re-ran an experiment or did not resume.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sweep_scaling import series  # noqa: E402  the same sweep, one round a point


def read_run(run_dir):
    """Experiments by name: results.json, then the journal's records over it, a later record of
    one experiment replacing an earlier one, a last line cut short skipped."""
    experiments = {}
    try:
        with open(os.path.join(run_dir, "results.json")) as f:
            for e in json.load(f).get("experiments", []):
                experiments[e["name"]] = e
    except FileNotFoundError:
        pass
    try:
        with open(os.path.join(run_dir, "experiments.jsonl")) as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        lines = []
    for i, line in enumerate(lines):
        if not line:
            continue
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1:  # the last line, cut short by the kill
                continue
            raise
        experiments[e["name"]] = e
    return experiments


def with_result(e):
    return e.get("status") == "ok"


def trial(args, rng, number, work):
    run_dir = os.path.join(work, f"run{number}")
    series_file = os.path.join(work, "sweep.yaml")
    env = dict(os.environ, EXPR_PLUGIN_PATH=args.plugins)
    kill_after = rng.randint(1, args.points - 1)
    extra_ms = rng.uniform(0, 20)
    # The progress lines, "done [k/N] NAME: ok" among them, go to standard error.
    expr = subprocess.Popen([args.expr, "run", series_file, "--out", run_dir, "--no-history"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, text=True)
    done = []
    for line in expr.stderr:
        if line.startswith("done ["):
            done.append(line.split("] ", 1)[1].rsplit(": ", 1)[0])
            if len(done) == kill_after:
                time.sleep(extra_ms / 1000)
                expr.send_signal(signal.SIGKILL)
                break
    # What expr printed before it died is reported done too.
    for line in expr.stderr:
        if line.startswith("done ["):
            done.append(line.split("] ", 1)[1].rsplit(": ", 1)[0])
    expr.wait()
    killed = expr.returncode == -signal.SIGKILL
    before = read_run(run_dir)
    lost = [name for name in done if name not in before or not with_result(before[name])]
    resumed = subprocess.run([args.expr, "run", "--resume", run_dir, "--no-history"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env).returncode
    after = read_run(run_dir)
    complete = sum(with_result(e) for e in after.values())
    rerun = [name for name in done if name in before and after.get(name, {}).get("timeline") != before[name].get("timeline")]
    ok = killed and not lost and resumed == 0 and complete == args.points and not rerun
    print(f"trial {number}: killed after {len(done)} reported done (+{extra_ms:.1f} ms){'' if killed else ' (expr had ended)'}; "
          f"{len(before)} in the run directory, lost {len(lost)}; --resume exit {resumed}, {complete} of {args.points} with a result, "
          f"re-run {len(rerun)}: {'ok' if ok else 'FAILED'}", flush=True)
    for name in lost[:5] + rerun[:5]:
        print(f"  {name}", flush=True)
    return ok


def main():
    build = os.path.join(HERE, "..", "build")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--expr", default=os.path.join(build, "bin", "expr"))
    p.add_argument("--plugins", default=os.path.join(build, "tests", "plugins", "lib"))
    p.add_argument("--points", type=int, default=1000)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--out", help="where the series and run directories go (default: a temporary directory, removed)")
    args = p.parse_args()
    print(f"kill_resume: {args.trials} trials of {args.points} points, seed {args.seed}", flush=True)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as temporary:
        work = args.out or temporary
        os.makedirs(work, exist_ok=True)
        with open(os.path.join(work, "sweep.yaml"), "w") as f:
            f.write(series(args.points))
        results = [trial(args, rng, n, work) for n in range(1, args.trials + 1)]
    print(f"kill_resume: {sum(results)} of {len(results)} trials lost nothing and resumed", flush=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
