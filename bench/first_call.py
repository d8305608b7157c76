"""The cold first call of each series 3 variant, measured without expr, to check expr's first_call.

Every run is a fresh Python process that prepares exactly what the variant's expr plugin prepares in
setup() before its first call, and nothing more: the CUDA context and the inputs on the GPU (q, k, v
from seed 0; the boolean mask for naive), the SDPA backend pinned and PyTorch asked which backend it
would take, the cuDNN version read. No forward and no reference run before the timed call, so
cuBLAS and cuDNN are as uninitialised as in expr's worker. The process then times one forward, wall
clock, with torch.cuda.synchronize() before and after, and the second forward the same way.

    python3 bench/first_call.py [--runs N] [--results RUN_DIR/results.json ...] [VARIANT ...]
        N fresh processes per variant (default 5); per variant the median and range of the first
        call and of the second. Variants: naive, naive_inplace, sdpa_math, sdpa_efficient,
        sdpa_flash, sdpa_cudnn, sdpa_auto (default: all), with experiments/series3.yaml's shapes;
        with --results, the variants and parameters of the first expr run given instead, and the
        first_call of every run given next to each (its median and range, the ratio of the medians,
        and whether they agree: medians within 25%, or else overlapping ranges).
        With --dry-run, no process is started: the variants it would measure, with their
        parameters, and the first_call figures of the runs given (CI runs this on tests/data).

    python3 bench/first_call.py --runs N --interleave "EXPR_COMMAND {round}" --results DIR{round}/results.json
        N rounds, each running EXPR_COMMAND (with {round} replaced) and then one fresh process per
        variant, so that both sides see the same machine at the same time: the first call drifts
        over minutes on a shared machine, and measuring one side after the other shows the drift
        as a difference.
"""
import argparse
import json
import math
import statistics
import subprocess
import sys
import time

SERIES3_PARAMS = {"batch": 8, "heads": 16, "seq": 1024, "head_dim": 64, "dtype": "bf16"}
VARIANTS = {
    "naive": ("masked_fill", {"inplace": False}),
    "naive_inplace": ("masked_fill", {"inplace": True}),
    "sdpa_math": ("sdpa", {"backend": "math", "causal": True}),
    "sdpa_efficient": ("sdpa", {"backend": "efficient", "causal": True}),
    "sdpa_flash": ("sdpa", {"backend": "flash", "causal": True}),
    "sdpa_cudnn": ("sdpa", {"backend": "cudnn", "causal": True}),
    "sdpa_auto": ("sdpa", {"backend": "auto", "causal": True}),
}
BACKEND_NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn"}  # at::_fused_sdp_choice, as plugins/sdpa names them


# ---- One fresh process: prepare as expr's setup() does, then time the first call -----------------

def prepare(plugin, p):
    """The variant's forward and the backend PyTorch will use, after exactly what its plugin's
    setup() does: plugins/attention make_inputs, then plugins/masked_fill or plugins/sdpa."""
    import torch
    import torch.nn.functional as F

    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "fp64": torch.float64}
    device = torch.device("cuda", 0)
    torch.manual_seed(0)
    shape = (p["batch"], p["heads"], p["seq"], p["head_dim"])
    q, k, v = (torch.randn(shape, dtype=dtypes[p["dtype"]], device=device) for _ in range(3))
    if plugin == "masked_fill":
        mask = torch.ones(p["seq"], p["seq"], dtype=torch.bool, device=device).triu(1)
        scale = 1.0 / math.sqrt(p["head_dim"])

        def forward():
            scores = torch.matmul(q, k.transpose(-2, -1)) * scale
            if p["inplace"]:
                scores.masked_fill_(mask, -math.inf)
            else:
                scores = scores.masked_fill(mask, -math.inf)
            return torch.matmul(torch.softmax(scores, -1), v)
        backend = "-"  # not SDPA
    else:
        # pin(): the global switches torch.nn.attention.sdpa_kernel() sets; "auto" enables all four.
        chosen = p["backend"]
        torch.backends.cuda.enable_math_sdp(chosen in ("auto", "math"))
        torch.backends.cuda.enable_mem_efficient_sdp(chosen in ("auto", "efficient"))
        torch.backends.cuda.enable_flash_sdp(chosen in ("auto", "flash"))
        torch.backends.cuda.enable_cudnn_sdp(chosen in ("auto", "cudnn"))
        choice = torch._fused_sdp_choice(q, k, v, None, 0.0, p["causal"])
        backend = BACKEND_NAMES.get(choice, f"none ({choice})")

        def forward():
            return F.scaled_dot_product_attention(q, k, v, is_causal=p["causal"])
    torch.backends.cudnn.version()  # expr_torch::note_versions reads it
    return forward, backend


def child(experiment):
    import torch

    forward, backend = prepare(experiment["plugin"], experiment["params"])
    torch.cuda.synchronize()  # expr's worker waits for setup's work before timing
    times = []
    with torch.no_grad():
        for _ in range(2):
            start = time.perf_counter_ns()
            forward()
            torch.cuda.synchronize()
            times.append(time.perf_counter_ns() - start)
    print(json.dumps({"first_ns": times[0], "second_ns": times[1], "backend": backend,
                      "torch": torch.__version__, "device": torch.cuda.get_device_name(0)}))


# ---- The parent: fresh processes per variant, then the figures -----------------------------------

def measure(experiment, runs):
    samples = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, __file__, "--child", json.dumps(experiment)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{experiment['name']}: the fresh process failed (exit {done.returncode}):\n{done.stderr}")
        samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return samples


def ms(ns):
    return f"{ns / 1e6:.3f} ms"


def spread(values):
    return f"{ms(statistics.median(values)):>12} [{ms(min(values))} .. {ms(max(values))}]"


def experiments_to_run(args):
    if args.results:
        with open(args.results[0]) as f:
            results = json.load(f)
        chosen = [e for e in results["experiments"]
                  if e["status"] == "ok" and e["plugin"] in ("masked_fill", "sdpa") and e["device"] == "cuda"]
    else:
        chosen = [{"name": name, "plugin": plugin, "params": {**SERIES3_PARAMS, **params}}
                  for name, (plugin, params) in VARIANTS.items()]
    if args.variants:
        unknown = set(args.variants) - {e["name"] for e in chosen}
        if unknown:
            raise SystemExit(f"unknown variants: {', '.join(sorted(unknown))}; known: {', '.join(e['name'] for e in chosen)}")
        chosen = [e for e in chosen if e["name"] in args.variants]
    return chosen


def expr_first_calls(files, name):
    """The first_call of experiment `name` in each expr results.json that has it."""
    out = []
    for path in files:
        with open(path) as f:
            for e in json.load(f)["experiments"]:
                if e["name"] == name and "first_call_ns" in e.get("timing", {}):
                    out.append(e["timing"]["first_call_ns"])
    return out


def interleaved(args):
    """Rounds of one expr run, then one fresh process per variant; the table over all rounds."""
    started = time.perf_counter()
    samples = {}
    results = [pattern.replace("{round}", str(r)) for r in range(args.runs) for pattern in args.results]
    for r in range(args.runs):
        subprocess.run(args.interleave.replace("{round}", str(r)), shell=True, check=True, stdout=subprocess.DEVNULL)
        per_round = argparse.Namespace(results=[results[r]], variants=args.variants)
        for e in experiments_to_run(per_round):
            samples.setdefault(e["name"], []).extend(
                measure({"name": e["name"], "plugin": e["plugin"], "params": e["params"]}, 1))
    any_sample = next(iter(samples.values()))[0]
    print(f"PyTorch {any_sample['torch']} on {any_sample['device']}, {args.runs} rounds: an expr run, then a fresh process per variant")
    print(f"{'variant':15s} {'backend':9s} {'PyTorch first call: median [min .. max]':>42s}   {'expr first_call: median [min .. max]':>42s}")
    for name, got in samples.items():
        here = [s["first_ns"] for s in got]
        expr_first = expr_first_calls(results, name)
        ratio = statistics.median(expr_first) / statistics.median(here)
        overlap = min(expr_first) <= max(here) and min(here) <= max(expr_first)
        verdict = "agree: medians within 25%" if abs(ratio - 1) <= 0.25 else "agree: ranges overlap" if overlap else "DISAGREE"
        print(f"{name:15s} {got[0]['backend']:9s} {spread(here):>42s}   {spread(expr_first):>42s}  expr/PyTorch {ratio:.3f}  {verdict}",
              flush=True)
    print(f"{time.perf_counter() - started:.1f} s in all")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per variant")
    parser.add_argument("--results", nargs="+", help="expr results.json files: the variants and parameters of the first, "
                        "the first_call figures of all")
    parser.add_argument("--interleave", help="an expr command to run before each round ({round} is its number)")
    parser.add_argument("--dry-run", action="store_true", help="measure nothing: list the variants and expr's figures")
    parser.add_argument("variants", nargs="*", help="variants to measure (default: all)")
    args = parser.parse_args()
    if args.dry_run:
        for e in experiments_to_run(args):
            expr_first = expr_first_calls(args.results or [], e["name"])
            print(f"{e['name']:15s} {e['plugin']:11s} {json.dumps(e['params'], sort_keys=True)}"
                  + (f"   expr ({len(expr_first)} runs) {spread(expr_first)}" if expr_first else ""))
        return
    if args.interleave:
        interleaved(args)
        return

    started = time.perf_counter()
    header = None
    for e in experiments_to_run(args):
        samples = measure({"name": e["name"], "plugin": e["plugin"], "params": e["params"]}, args.runs)
        if header is None:
            header = f"PyTorch {samples[0]['torch']} on {samples[0]['device']}, {args.runs} fresh processes per variant"
            print(header)
            print(f"{'variant':15s} {'backend':9s} {'first call: median [min .. max]':>42s}   "
                  f"{'second call: median [min .. max]':>42s}")
        line = (f"{e['name']:15s} {samples[0]['backend']:9s} {spread([s['first_ns'] for s in samples]):>42s}   "
                f"{spread([s['second_ns'] for s in samples]):>42s}")
        expr_first = expr_first_calls(args.results or [], e["name"])
        if expr_first:
            here = [s["first_ns"] for s in samples]
            ratio = statistics.median(expr_first) / statistics.median(here)
            overlap = min(expr_first) <= max(here) and min(here) <= max(expr_first)
            verdict = "agree: medians within 25%" if abs(ratio - 1) <= 0.25 else \
                      "agree: ranges overlap" if overlap else "DISAGREE"
            line += f"   expr ({len(expr_first)} runs) {spread(expr_first)}  expr/here {ratio:.3f}  {verdict}"
        print(line, flush=True)
    print(f"{time.perf_counter() - started:.1f} s in all")


if __name__ == "__main__":
    main()
