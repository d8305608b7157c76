"""expr's hardware counters against Nsight Compute's, kernel by kernel, on the same machine.

    python3 bench/counters_vs_ncu.py compare RUN_DIR OUT_DIR [--experiments sdpa_flash,sdpa_efficient,sdpa_cudnn] [--cache-control none|all]
        for each experiment of an `expr run` with `counters: on`: runs the experiment's forward
        (built as bench/series3_torch.py builds it, from RUN_DIR/results.json) under `ncu --metrics`
        with the same metric names expr collected, and writes OUT_DIR/counters_vs_ncu.md and .json:
        expr's value and ncu's per kernel and metric, their difference, and whether it is within
        10% relative or 2 percentage points, whichever is larger. Exit status 0 when every
        comparison passes, 1 when one does not, 2 when a side could not be measured at all.
        `--cache-control all` lets ncu flush every cache before each pass (its default) instead of
        matching expr, to see which figures depend on what the caches hold. ncu replays as expr did
        (`replay` in results.json): kernel replay against expr's kernel replay, application replay
        (the whole forward process once per pass) against expr's iteration replay.
    python3 bench/counters_vs_ncu.py cost ON_RUN_DIR OFF_RUN_DIR OFF_AGAIN_RUN_DIR
        the counters phase's cost per experiment (wall time, replay passes, kernels) and the timed
        figures with counters on against off: the difference of the medians, next to the noise
        within a run (the standard error of a median, 1.2533 × spread / sqrt(samples)) and between
        two runs with counters off; "within noise" when on differs from off by at most three times
        the larger standard error or the difference between the two off runs, whichever is larger
    python3 bench/counters_vs_ncu.py forward EXPERIMENT_JSON
        (what ncu runs) three warm-up forwards, then one inside the NVTX range "expr_counters",
        which is the one ncu profiles

Conditions. expr's counters phase asks CUPTI neither to lock clocks nor to flush caches: CUPTI's
kernel replay runs each kernel as often as the metrics need, with the clocks wherever the GPU's
boost puts them and the caches as the previous pass (and CUPTI's restore of the memory the kernel
wrote) left them; under iteration replay (`counters_replay: iteration`) the runner runs the whole
iteration once per pass, so each kernel meets the caches as its own iteration leaves them and
nothing is saved or restored. ncu by default locks clocks to base and flushes every cache before
each pass, so it runs here with `--clock-control none --cache-control none`, which matches expr,
and with `--replay-mode kernel` or `application` to match expr's replay.

Everything that goes wrong is printed with what is needed to see why: expr's reason when its
counters were not collected, with the CUPTI lines of the worker's log; ncu's command, exit status
and the tail of its output when it measured nothing.
"""
import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import sys

NVTX_RANGE = "expr_counters"
DEFAULT_EXPERIMENTS = ["sdpa_flash", "sdpa_efficient", "sdpa_cudnn"]
RELATIVE, ABSOLUTE_PP = 0.10, 2.0  # the tolerance: 10% relative or 2 percentage points, whichever is larger


def find_ncu():
    candidates = [shutil.which("ncu"), "/usr/local/cuda/bin/ncu"]
    for root in ("/opt/nvidia/nsight-compute", "/usr/local/cuda/nsight-compute"):
        if os.path.isdir(root):
            candidates += [os.path.join(root, d, "ncu") for d in sorted(os.listdir(root), reverse=True)] + [os.path.join(root, "ncu")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def forward(experiment_file):
    """Run under ncu: the experiment's forward, warmed up, then once inside the NVTX range."""
    import torch
    from torch.nn.attention import sdpa_kernel

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from series3_torch import forward_of

    with open(experiment_file) as f:
        experiment = json.load(f)
    run, backend = forward_of(experiment)
    with sdpa_kernel(backend) if backend is not None else contextlib.nullcontext():
        with torch.no_grad():
            for _ in range(3):
                run()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push(NVTX_RANGE)
            run()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()


def worker_cupti_lines(run_dir, name):
    log = os.path.join(run_dir, "experiments", name, "worker.log")
    try:
        with open(log, errors="replace") as f:
            return [line.rstrip() for line in f if "cupti" in line]
    except OSError as e:
        return [f"(cannot read {log}: {e})"]


def parse_ncu_csv(text, metrics):
    """ncu --csv --page raw: a header row, a units row, then a row per profiled kernel, in launch order."""
    rows = [r for r in csv.reader(io.StringIO("\n".join(line for line in text.splitlines() if line.startswith('"'))))]
    header = next((r for r in rows if "Kernel Name" in r), None)
    if header is None:
        return None, "no CSV header with 'Kernel Name' in ncu's output"
    kernels = []
    for r in rows[rows.index(header) + 1:]:
        if len(r) != len(header) or not r[header.index("ID")].strip().isdigit():
            continue  # the units row
        values = {}
        for m in metrics:
            if m not in header:
                values[m] = None
                continue
            raw = r[header.index(m)].replace(",", "").strip()
            try:
                values[m] = float(raw)
            except ValueError:
                values[m] = None
        kernels.append({"name": r[header.index("Kernel Name")], "values": values})
    return kernels, None


NCU_REPLAY = {"kernel": "kernel", "iteration": "application"}  # expr's replay -> ncu's


def run_ncu(ncu, experiment, metrics, out_dir, cache_control, replay):
    spec = os.path.join(out_dir, f"{experiment['name']}.experiment.json")
    with open(spec, "w") as f:
        json.dump(experiment, f)
    command = [ncu, "--metrics", ",".join(metrics), "--clock-control", "none", "--cache-control", cache_control, "--replay-mode", NCU_REPLAY[replay],
               "--nvtx", "--nvtx-include", f"{NVTX_RANGE}/", "--target-processes", "all", "--csv", "--page", "raw",
               sys.executable, os.path.abspath(__file__), "forward", spec]
    print("   $", " ".join(command), flush=True)
    # Application replay starts the Python process once per pass.
    limit = 90 if replay == "kernel" else 400
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired as e:
        text = lambda x: x.decode(errors="replace") if isinstance(x, bytes) else (x or "")
        output = text(e.stdout) + text(e.stderr)
        return None, f"ncu did not finish within {limit} s; its output ends:\n      " + "\n      ".join(output.strip().splitlines()[-25:])
    with open(os.path.join(out_dir, f"{experiment['name']}.ncu.txt"), "w") as f:
        f.write(done.stdout + "\n--- stderr ---\n" + done.stderr)
    kernels, problem = parse_ncu_csv(done.stdout, metrics)
    if done.returncode != 0 or not kernels:
        tail = "\n      ".join((done.stdout + done.stderr).strip().splitlines()[-25:])
        return None, f"ncu exited {done.returncode}, {problem or f'{len(kernels)} kernels profiled'}; its output ends:\n      {tail}"
    return kernels, None


def compare(run_dir, out_dir, names, cache_control):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(run_dir, "results.json")) as f:
        results = json.load(f)
    ncu = find_ncu()
    print(f"ncu: {ncu or 'not found (PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute)'}")
    rows, problems, replays = [], [], set()
    for name in names:
        experiment = next((e for e in results["experiments"] if e["name"] == name), None)
        print(f"== {name}", flush=True)
        if experiment is None:
            problems.append(f"{name}: not in {run_dir}/results.json")
            continue
        counters = experiment.get("trace", {}).get("counters")
        if not counters or counters.get("state") != "collected":
            reason = counters.get("reason") if counters else "results.json has no counters (an expr without the counters phase?)"
            problems.append(f"{name}: expr collected no counters ({counters.get('state') if counters else 'none'}): {reason}")
            print("   expr's worker log, CUPTI lines:\n      " + "\n      ".join(worker_cupti_lines(run_dir, name)[-40:]))
            continue
        replay = counters.get("replay", "kernel")  # runs recorded before the choice used kernel replay
        replays.add(NCU_REPLAY[replay])
        print(f"   expr: {len(counters['kernels'])} kernels, {counters['replay_passes']} passes ({replay} replay), "
              f"phase {counters['wall_ns'] / 1e6:.1f} ms")
        if not ncu:
            problems.append(f"{name}: no ncu to compare with")
            continue
        metrics = counters["metrics"]
        theirs, problem = run_ncu(ncu, experiment, metrics, out_dir, cache_control, replay)
        if problem:
            problems.append(f"{name}: {problem}")
            continue
        ours = counters["kernels"]
        if len(ours) != len(theirs):
            problems.append(f"{name}: expr measured {len(ours)} kernels and ncu {len(theirs)}: "
                            f"expr {[k['name'][:60] for k in ours]}, ncu {[k['name'][:60] for k in theirs]}")
            continue
        for mine, other in zip(ours, theirs):
            for m in metrics:
                a, b = mine["values"].get(m), other["values"].get(m)
                ok = a is not None and b is not None and abs(a - b) <= max(RELATIVE * abs(b), ABSOLUTE_PP)
                rows.append({"experiment": name, "kernel": mine["name"], "ncu_kernel": other["name"], "metric": m, "expr": a, "ncu": b,
                             "difference_pp": None if a is None or b is None else a - b,
                             "relative": None if a is None or b is None or b == 0 else (a - b) / b, "pass": ok})
    write_table(out_dir, rows, problems, cache_control, "/".join(sorted(replays)) or "kernel")
    if problems:
        return 2
    return 0 if rows and all(r["pass"] for r in rows) else 1


def median_noise(stats):
    return 1.2533 * stats["spread"] / max(stats["count"], 1) ** 0.5


def cost(on_dir, off_dir, off_again_dir):
    load = lambda d: {e["name"]: e for e in json.load(open(os.path.join(d, "results.json")))["experiments"]}
    on, off, off_again = load(on_dir), load(off_dir), load(off_again_dir)
    print("| experiment | counters | kernels | replay passes | phase wall time | timing | median on | median off | on vs off | "
          "off vs off again | noise on / off | within noise |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 0
    for name, e in on.items():
        c = e.get("trace", {}).get("counters", {})
        phase = f"{c['wall_ns'] / 1e6:.1f} ms" if c.get("wall_ns") else "—"
        for kind in ("device", "host"):
            a, b, b2 = (r.get(name, {}).get("timing", {}).get(kind) for r in (on, off, off_again))
            if not a or not b or not b2:
                continue
            difference = (a["median_ns"] - b["median_ns"]) / b["median_ns"]
            between_runs = (b2["median_ns"] - b["median_ns"]) / b["median_ns"]
            within = abs(difference) <= max(3 * median_noise(a), 3 * median_noise(b), abs(between_runs))
            worst = max(worst, 0 if within or c.get("state") != "collected" else 1)
            print(f"| {name} | {c.get('state', 'none')} | {len(c.get('kernels', []))} | {c.get('replay_passes', '—')} | {phase} | {kind} | "
                  f"{a['median_ns'] / 1e3:.1f} µs | {b['median_ns'] / 1e3:.1f} µs | {difference:+.2%} | {between_runs:+.2%} | "
                  f"{median_noise(a):.2%} / {median_noise(b):.2%} | {'yes' if within else 'NO'} |")
            phase = ""
        if c.get("state") not in ("collected", "off") and c.get("reason"):
            print(f"   {name}: counters {c['state']}: {c['reason']}")
    return worst


def short(name, width=48):
    return name if len(name) <= width else name[:width - 1] + "…"


def write_table(out_dir, rows, problems, cache_control, replay):
    number = lambda v, fmt: "—" if v is None else fmt.format(v)
    lines = [f"Within {RELATIVE:.0%} relative or {ABSOLUTE_PP:g} percentage points, whichever is larger "
             f"(ncu --clock-control none --cache-control {cache_control} --replay-mode {replay}).", "",
             "| experiment | kernel | metric | expr % | ncu % | difference (pp) | relative | pass |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['experiment']} | {short(r['kernel'])} | {r['metric']} | {number(r['expr'], '{:.2f}')} | {number(r['ncu'], '{:.2f}')} | "
                     f"{number(r['difference_pp'], '{:+.2f}')} | {number(r['relative'], '{:+.1%}')} | {'yes' if r['pass'] else 'NO'} |")
    for p in problems:
        lines.append(f"\nproblem: {p}")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(out_dir, "counters_vs_ncu.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "counters_vs_ncu.json"), "w") as f:
        json.dump({"rows": rows, "problems": problems}, f, indent=1)


def main():
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "cost":
        return cost(args[1], args[2], args[3])
    if len(args) == 2 and args[0] == "forward":
        forward(args[1])
        return 0
    if len(args) >= 3 and args[0] == "compare":
        names, cache_control = DEFAULT_EXPERIMENTS, "none"
        options = args[3:]
        while len(options) >= 2 and options[0] in ("--experiments", "--cache-control"):
            if options[0] == "--experiments":
                names = options[1].split(",")
            else:
                cache_control = options[1]
            options = options[2:]
        if options or cache_control not in ("none", "all"):
            print(__doc__, file=sys.stderr)
            return 2
        return compare(args[1], args[2], names, cache_control)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
