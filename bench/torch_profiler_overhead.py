"""The PyTorch profiler on the launch-bound loop of bench/tracing_overhead.cpp: tiny in-place adds
on a one-element CUDA tensor, untraced, then under torch.profiler (CPU and CUDA activities), then
untraced again; and how fast the profiler turns its events into results afterwards.

    python3 bench/torch_profiler_overhead.py [launches] [repeats]

Needs PyTorch and a CUDA device; without them it says so and exits 1 (CI checks that, and the
arguments, on its machine without a GPU).
"""
import sys
import time


def usage():
    print(__doc__, file=sys.stderr)
    sys.exit(2)


def arguments(args):
    """(launches, repeats) from the command line, or exit 2 with the usage."""
    if len(args) > 2:
        usage()
    try:
        launches, repeats = (int(a) for a in args + ["20000", "5"][len(args):])
    except ValueError:
        usage()
    if launches < 1 or repeats < 1:
        usage()
    return launches, repeats


def main():
    launches, repeats = arguments(sys.argv[1:])
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError as e:
        sys.exit(f"torch_profiler_overhead.py: needs PyTorch: {e}")
    if not torch.cuda.is_available():
        sys.exit("torch_profiler_overhead.py: needs a CUDA device, and PyTorch sees none")
    x = torch.zeros(1, device="cuda")

    def loop():
        for _ in range(launches):
            x.add_(1)

    def per_launch():
        best = float("inf")
        for _ in range(repeats):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            loop()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter_ns() - t0) / launches)
        return best

    with torch.no_grad():
        loop()
        before = per_launch()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            traced = per_launch()
        after = per_launch()
        t0 = time.perf_counter()
        events = prof.events()  # the profiler's post-processing of what it collected
        averages = prof.key_averages()
        post = time.perf_counter() - t0

    print(f"launches per run {launches}, best of {repeats} runs each (torch {torch.__version__})")
    print(f"untraced                 {before / 1e3:8.3f} µs per launch")
    print(f"traced (torch.profiler)  {traced / 1e3:8.3f} µs per launch   added {(traced - before) / 1e3:.3f} µs")
    print(f"untraced after tracing   {after / 1e3:8.3f} µs per launch   left behind {(after - before) / 1e3:+.3f} µs")
    print(f"post-processing: {len(events)} events in {post:.3f} s = {len(events) / post:.0f} events/s ({len(averages)} op kinds)")


if __name__ == "__main__":
    main()
