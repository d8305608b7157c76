"""expr's timings measured again without expr, in this Python process, for the experiments of a
run's results.json (built as bench/series3_torch.py builds each plugin's forward):

    python3 bench/independent_timing.py host RUN_DIR/results.json [NAME_REGEX]
        host time of one forward as expr's host_time takes it: the device synchronized before each
        call, the median of 400 calls after 20 warm-up calls. Run it in several fresh processes: a
        process is the unit of noise.
    python3 bench/independent_timing.py device RUN_DIR/results.json [NAME_REGEX]
        device time per forward with the launch queue held: torch.cuda._sleep() keeps the stream
        busy while a batch of forwards is enqueued, then one pair of CUDA events times the batch as
        the device runs it back to back; the median of 15 batches, next to expr's gpu_time.

    python3 bench/independent_timing.py backtoback RUN_DIR/results.json [NAME_REGEX]
        the same held batch traced by torch.profiler (CUPTI through Kineto), for iterations of one
        kernel: each kernel's own duration and the interval from one kernel's start to the next's,
        as the device runs them back to back. Their difference is the device's own gap between two
        kernels, which gpu_time holds and a lone traced kernel does not (docs/timing.md).

Prints one line per experiment: its name, the figure, expr's figure and their ratio.
"""
import contextlib
import json
import re
import sys
import time

import torch
from torch.nn.attention import sdpa_kernel

from series3_torch import forward_of


def experiments(results_path, pattern):
    with open(results_path) as f:
        results = json.load(f)
    for e in results["experiments"]:
        if e["status"] == "ok" and re.search(pattern, e["name"]):
            yield e


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def host_ns(forward):
    out = forward()  # the cold call
    for _ in range(20):
        out = forward()
    samples = []
    for _ in range(400):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        out = forward()  # the previous output stays alive meanwhile, as in the plugins
        samples.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    del out
    return median(samples)


def held_device_ns(forward):
    for _ in range(3):
        forward()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # A batch of about 10 ms of device time, as expr's; one call timed first to size it.
    start.record()
    forward()
    end.record()
    end.synchronize()
    batch = max(1, min(2000, int(10.0 / max(start.elapsed_time(end), 1e-3))))
    per_call = []
    for _ in range(15):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.cuda._sleep(200_000_000)  # about 0.1 s at the H200's clock: longer than enqueueing the batch
        start.record()
        for _ in range(batch):
            forward()
        end.record()
        enqueued = time.perf_counter() - t0
        end.synchronize()
        if enqueued < 0.05:  # the hold outlasted the enqueueing by a margin, so the batch ran back to back
            per_call.append(start.elapsed_time(end) * 1e6 / batch)
    return median(per_call) if per_call else float("nan")


def back_to_back(forward, calls=64):
    """The held batch traced: (median kernel duration, median start-to-start interval) in ns."""
    for _ in range(3):
        forward()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(200_000_000)
        for _ in range(calls):
            forward()
        torch.cuda.synchronize()
    kernels = sorted(
        (e.start_ns(), e.duration_ns())
        for e in prof.profiler.kineto_results.events()
        if e.device_type() == torch.autograd.DeviceType.CUDA and "sleep" not in e.name() and "spin" not in e.name()
        and "emcpy" not in e.name() and "emset" not in e.name())
    if len(kernels) != calls:  # not one kernel an iteration
        return None
    durations = [d for _, d in kernels]
    intervals = [b[0] - a[0] for a, b in zip(kernels, kernels[1:])]
    return median(durations), median(intervals)


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("host", "device", "backtoback"):
        sys.exit(__doc__)
    what, results_path = sys.argv[1], sys.argv[2]
    pattern = sys.argv[3] if len(sys.argv) == 4 else ""
    key = "host" if what == "host" else "device"
    for e in experiments(results_path, pattern):
        if key not in e["timing"]:
            continue
        forward, backend = forward_of(e)
        expr_ns = e["timing"][key]["median_ns"]
        with torch.no_grad(), (sdpa_kernel(backend) if backend is not None else contextlib.nullcontext()):
            if what == "backtoback":
                traced = back_to_back(forward)
                if traced:
                    kernel, interval = traced
                    print(f"{e['name']:<40} back to back: kernel {kernel / 1e3:8.2f} us, start to start {interval / 1e3:8.2f} us "
                          f"(gap {(interval - kernel) / 1e3:5.2f} us)   expr gpu_time {expr_ns / 1e3:8.2f} us", flush=True)
                continue
            ns = host_ns(forward) if what == "host" else held_device_ns(forward)
        print(f"{e['name']:<40} {what} {ns / 1e3:10.2f} us   expr {expr_ns / 1e3:10.2f} us   ratio {ns / expr_ns:6.3f}", flush=True)


if __name__ == "__main__":
    main()
