"""Series 3 the way the series measured it, in Python with torch.profiler, for comparison with
`expr run experiments/series3.yaml` on the same machine. It reads expr's results.json so that both
do the same work: the same variants and shapes, and per variant the same number of forward calls
(expr's cold call, warm-up, timed samples and traced iterations).

    python3 bench/series3_torch.py profile RUN_DIR/results.json OUT_DIR
        every forward under torch.profiler (the first skipped, the warm-up as the profiler's warm-up,
        the rest recorded), then per variant what the series read off the profiler: kernels and
        device time per forward, and the Chrome trace it exported to OUT_DIR/VARIANT.json (OUT_DIR
        is created if it does not exist)
    python3 bench/series3_torch.py events RUN_DIR/results.json
        device time per forward from one pair of CUDA events around back-to-back forwards, next to
        expr's gpu_time for the same variant
    python3 bench/series3_torch.py memory RUN_DIR/results.json
        per variant, torch.cuda.max_memory_allocated around one forward after warm-up (the previous
        forward's output still held, as expr's plugins hold it until the next one replaces it),
        and the bytes and allocations the caching allocator counted, next to expr's peak_memory,
        allocated_bytes and allocations; exits 1 when a peak differs from expr's by more than 1 MiB
    python3 bench/series3_torch.py plan RUN_DIR/results.json
        without a GPU or PyTorch: per variant the forwards `profile` runs and records, as read off
        results.json (CI runs it on the recorded run in tests/data)
"""
import contextlib
import json
import math
import os
import sys
import time


def forward_of(experiment):
    """The experiment's forward, built as its expr plugin builds it."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend

    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "fp64": torch.float64}
    backends = {"math": SDPBackend.MATH, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    p = experiment["params"]
    torch.manual_seed(0)
    shape = (p["batch"], p["heads"], p["seq"], p["head_dim"])
    q, k, v = (torch.randn(shape, dtype=dtypes[p["dtype"]], device="cuda") for _ in range(3))
    if experiment["plugin"] == "masked_fill":
        mask = torch.ones(p["seq"], p["seq"], dtype=torch.bool, device="cuda").triu(1)
        scale = 1.0 / math.sqrt(p["head_dim"])

        def naive():
            scores = torch.matmul(q, k.transpose(-2, -1)) * scale
            scores = scores.masked_fill_(mask, float("-inf")) if p["inplace"] else scores.masked_fill(mask, float("-inf"))
            return torch.matmul(torch.softmax(scores, -1), v)
        return naive, None
    backend = backends.get(p["backend"])
    return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=p["causal"])), backend


def plan_of(experiment):
    """(calls, warmup, recorded): the forwards expr's worker ran for the experiment (the cold call,
    the warm-up, the host samples, the device batches, each of which starts with one unmeasured
    call, and the traced iterations), and how `profile` splits them: the first skipped, `warmup` as
    the profiler's warm-up, the rest recorded."""
    t = experiment["timing"]
    calls = (1 + experiment["iterations"]["warmup"] + t["host"]["iterations"] + t["device"]["iterations"] + t["device"]["count"]
             + experiment["iterations"]["traced"])
    warmup = max(experiment["iterations"]["warmup"], 1)
    return calls, warmup, calls - 1 - warmup


def measured(results):
    return [e for e in results["experiments"] if e["status"] == "ok"]


def print_plan(results):
    for e in measured(results):
        calls, warmup, recorded = plan_of(e)
        print(f"{e['name']:15s} {calls:6d} forwards: 1 skipped, {warmup} warm-up, {recorded} recorded")


def import_torch_with_cuda():
    """torch, or exit 1 saying why this mode cannot run here."""
    try:
        import torch
    except ImportError as e:
        sys.exit(f"series3_torch.py: this mode needs PyTorch: {e}")
    if not torch.cuda.is_available():
        sys.exit("series3_torch.py: this mode needs a CUDA device, and PyTorch sees none")
    return torch


def profile_all(results, out_dir):
    # Made before anything runs: the profiler's export does not create it, and says nothing.
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        sys.exit(f"series3_torch.py: cannot make the output directory: {e}")
    torch = import_torch_with_cuda()
    from torch.nn.attention import sdpa_kernel
    from torch.profiler import ProfilerActivity, profile, schedule

    start = time.perf_counter()
    for e in measured(results):
        forward, backend = forward_of(e)
        calls, warmup, recorded = plan_of(e)
        seen = {}

        def read_off(prof, name=e["name"]):
            # What the series read off the profiler: GPU activities and device time per forward.
            prof.export_chrome_trace(os.path.join(out_dir, f"{name}.json"))
            gpu = [ev for ev in prof.events() if ev.device_type == torch.autograd.DeviceType.CUDA
                   and ev.name != "forward" and not ev.name.startswith("ProfilerStep")]  # kernels and copies, not ranges
            seen["activities"] = len(gpu) / recorded
            seen["device_us"] = sum(ev.time_range.elapsed_us() for ev in gpu) / recorded

        t0 = time.perf_counter()
        with torch.no_grad(), (sdpa_kernel(backend) if backend else contextlib.nullcontext()):
            torch.cuda.synchronize()  # expr's setup runs no forward: the first of `calls` is the cold one
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                         schedule=schedule(skip_first=1, wait=0, warmup=warmup, active=recorded),
                         on_trace_ready=read_off) as prof:
                for _ in range(calls):
                    with torch.profiler.record_function("forward"):
                        forward()
                    prof.step()
        torch.cuda.synchronize()
        if not os.path.isfile(os.path.join(out_dir, f"{e['name']}.json")):
            sys.exit(f"series3_torch.py: {e['name']}: the profiler wrote no trace to {out_dir}")
        print(f"{e['name']:15s} {calls:6d} forwards  {seen.get('activities', 0):6.1f} GPU activities/forward  "
              f"{seen.get('device_us', 0):9.2f} us device/forward  {time.perf_counter() - t0:7.2f} s", flush=True)
    print(f"torch.profiler workflow: {time.perf_counter() - start:.2f} s for all variants (after import and CUDA init)")


def events(results):
    torch = import_torch_with_cuda()
    from torch.nn.attention import sdpa_kernel

    for e in measured(results):
        forward, backend = forward_of(e)
        n = e["timing"]["device"]["iterations"]
        with torch.no_grad(), (sdpa_kernel(backend) if backend else contextlib.nullcontext()):
            for _ in range(max(e["iterations"]["warmup"], 3)):
                forward()
            torch.cuda.synchronize()
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            for _ in range(n):
                forward()
            end.record()
            end.synchronize()
        ours = e["timing"]["device"]["median_ns"] / 1e3
        theirs = begin.elapsed_time(end) * 1e3 / n
        print(f"{e['name']:15s} CUDA events over {n:5d} forwards: {theirs:9.2f} us   expr gpu_time: {ours:9.2f} us   "
              f"expr/events = {ours / theirs:.4f}", flush=True)


def memory(results):
    torch = import_torch_with_cuda()
    from torch.nn.attention import sdpa_kernel

    MiB = 1 << 20
    worst = 0
    print("| variant | peak (PyTorch) | peak_memory (expr) | allocated (PyTorch) | allocated_bytes (expr) | allocations (PyTorch) | allocations (expr) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for e in measured(results):
        ours = e.get("trace", {}).get("allocator_memory")
        if ours is None:
            sys.exit(f"series3_torch.py: {e['name']}: results.json has no allocator_memory (a run from before expr traced memory?)")
        forward, backend = forward_of(e)
        with torch.no_grad(), (sdpa_kernel(backend) if backend else contextlib.nullcontext()):
            out = forward()
            out = forward()  # warm: cuBLAS's and cuDNN's workspaces are set up, one output is held
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_stats()
            out = forward()
            torch.cuda.synchronize()
            after = torch.cuda.memory_stats()
        del out
        peak = after["allocated_bytes.all.peak"] - before["allocated_bytes.all.current"]
        allocated = after["allocated_bytes.all.allocated"] - before["allocated_bytes.all.allocated"]
        allocations = after["allocation.all.allocated"] - before["allocation.all.allocated"]
        worst = max(worst, abs(peak - ours["peak_bytes"]))
        print(f"| {e['name']} | {peak / MiB:.3f} MiB | {ours['peak_bytes'] / MiB:.3f} MiB | {allocated / MiB:.3f} MiB | "
              f"{ours['allocated_bytes'] / MiB:.3f} MiB | {allocations} | {ours['allocations']:g} |", flush=True)
    print(f"largest peak difference: {worst} bytes ({'within' if worst <= MiB else 'beyond'} 1 MiB)")
    if worst > MiB:
        sys.exit(1)


def main():
    args = sys.argv[1:]
    if not (len(args) == 3 and args[0] == "profile" or len(args) == 2 and args[0] in ("events", "memory", "plan")):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    with open(args[1]) as f:
        results = json.load(f)
    if args[0] == "profile":
        profile_all(results, args[2])
    elif args[0] == "events":
        events(results)
    elif args[0] == "memory":
        memory(results)
    else:
        print_plan(results)


if __name__ == "__main__":
    main()
