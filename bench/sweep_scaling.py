#!/usr/bin/env python3
"""Does a sweep cost the same per point at its end as at its start? (issue 32)

Runs a one-axis sweep of the `waiter` test plugin (every point busy-waits the same 10 us, so every
point costs the same work) of N points for each N given, serially with one timing round, and reads
each experiment's timeline from results.json (outcome::Mark: "spawned" just before the parent
asks for the worker, "ended" once its result is in):

  between workers  the parent's own time from one worker's "ended" to the next one's "spawned":
                   its bookkeeping per finished point (files written, guesses judged)
  spawn to ended   one worker's life as the parent sees it: its fork (by the launcher,
                   runner/launcher.hpp), the plugin's load, the timing, the result sent back

Prints the median of each over the first and the last 100 points, their ratio (1.0 is a sweep that
scales), the wall time per point, and the parent's peak memory (the largest resident set among
expr, its launcher and the workers it waited for).

  python3 bench/sweep_scaling.py [--expr BUILD/bin/expr] [--plugins BUILD/tests/plugins/lib]
                                 [--out DIR] [N ...]            (default N: 100 1000 10000)

With --check it runs the smallest sizes only and asserts that the figures exist (CI runs that,
tests/CMakeLists.txt); the figures are for the README, from a quiet machine.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def series(points):
    # Values apart by a millionth of a microsecond: distinct points, the same work.
    values = ", ".join(f"{10 + i * 1e-6:.6f}" for i in range(points))
    return (
        "series: sweep-scaling\n"
        "defaults:\n"
        "  device: cpu\n"
        "  iterations: {warmup: 1, traced: 0, min_samples: 5, min_time: 0, max_time: 0.01, rounds: 1}\n"
        "experiments:\n"
        "  - name: w\n"
        "    plugin: waiter\n"
        f"    axes:\n      delay: [{values}]\n"
    )


def mark(experiment, step):
    for m in experiment.get("timeline", []):
        if m["step"] == step:
            return m["at_ns"]
    return None


def median_ms(values):
    return statistics.median(values) / 1e6 if values else float("nan")


def measure(expr, plugins, out, points):
    os.makedirs(out, exist_ok=True)
    series_file = os.path.join(out, f"sweep-{points}.yaml")
    with open(series_file, "w") as f:
        f.write(series(points))
    run_dir = os.path.join(out, f"run-{points}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    done = subprocess.run([expr, "run", series_file, "--out", run_dir, "--plugin-path", plugins],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        sys.exit(f"sweep_scaling: expr run of {points} points exited {done.returncode}:\n{done.stderr[-2000:]}")
    with open(os.path.join(run_dir, "results.json")) as f:
        experiments = json.load(f)["experiments"]
    if len(experiments) != points:
        sys.exit(f"sweep_scaling: {len(experiments)} experiments in results.json, {points} planned")
    spawned = [mark(e, "spawned") for e in experiments]
    ended = [mark(e, "ended") for e in experiments]
    if None in spawned or None in ended:
        sys.exit("sweep_scaling: an experiment's timeline lacks 'spawned' or 'ended'")
    # Serial, one slot: experiments ran in the order listed.
    between = [spawned[i] - ended[i - 1] for i in range(1, points)]
    life = [e - s for s, e in zip(spawned, ended)]
    window = min(100, max(1, points // 4))
    return {
        "points": points,
        "wall_s": wall,
        "per_point_ms": wall * 1e3 / points,
        "between_first_ms": median_ms(between[:window]),
        "between_last_ms": median_ms(between[-window:]),
        "life_first_ms": median_ms(life[:window]),
        "life_last_ms": median_ms(life[-window:]),
        "window": window,
        # ru_maxrss of children is a maximum over all of them so far: meaningful for this run only
        # where it grew past the runs before.
        "peak_rss_mib": peak_kib / 1024 if peak_kib > before else None,
    }


def main():
    build = os.path.join(os.path.dirname(HERE), "build")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("points", nargs="*", type=int)
    p.add_argument("--expr", default=os.path.join(build, "bin", "expr"))
    p.add_argument("--plugins", default=os.path.join(build, "tests", "plugins", "lib"))
    p.add_argument("--out", help="where the series and run directories go (default: a temporary directory, removed)")
    p.add_argument("--check", action="store_true", help="small sizes, figures asserted to exist (CI)")
    a = p.parse_args()
    sizes = a.points or ([20, 60] if a.check else [100, 1000, 10000])
    with tempfile.TemporaryDirectory() as scratch:
        out = a.out or scratch
        print(f"{'points':>7} {'wall':>9} {'per point':>10} {'between workers, first/last':>30} {'spawn to ended, first/last':>30} {'peak RSS':>9}")
        for n in sizes:
            r = measure(a.expr, a.plugins, out, n)
            for key in ("between_first_ms", "between_last_ms", "life_first_ms", "life_last_ms"):
                if not r[key] > 0:
                    sys.exit(f"sweep_scaling: {key} is {r[key]}: the timeline does not say what it should")
            ratio_between = r["between_last_ms"] / r["between_first_ms"]
            ratio_life = r["life_last_ms"] / r["life_first_ms"]
            rss = f"{r['peak_rss_mib']:.0f} MiB" if r["peak_rss_mib"] else "—"
            print(f"{n:>7} {r['wall_s']:>8.1f}s {r['per_point_ms']:>8.1f}ms "
                  f"{r['between_first_ms']:>10.2f} / {r['between_last_ms']:>6.2f} ms ({ratio_between:4.2f}x) "
                  f"{r['life_first_ms']:>10.2f} / {r['life_last_ms']:>6.2f} ms ({ratio_life:4.2f}x) {rss:>9}", flush=True)
        print(f"(first/last: medians over the first and the last {min(100, max(1, sizes[-1] // 4))} points of the largest run)")


if __name__ == "__main__":
    main()
