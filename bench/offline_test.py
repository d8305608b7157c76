"""The GPU-free part of each Python benchmark under bench/, run on the recorded H200 runs in
tests/data, so that a change of results.json or of a script that breaks it fails CI (which has no
GPU) and not the next measurement on the GPU machine. One script a call, as ctest runs it:

    python3 bench/offline_test.py series3_torch|counters_vs_ncu|first_call|torch_profiler_overhead

Each check runs the script as a user would and asserts on what it prints, its exit status and the
files it writes. The modes that need PyTorch and a GPU are run with no device visible, where they
must stop with one clear line instead of a traceback.
"""
import os
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(BENCH), "tests", "data")
SERIES3 = os.path.join(DATA, "series3-h200")
COUNTERS = os.path.join(DATA, "series3-counters-h200")


def run(script, *args):
    """(exit status, stdout, stderr) of bench/SCRIPT with ARGS, no CUDA device visible."""
    done = subprocess.run([sys.executable, os.path.join(BENCH, script), *args], capture_output=True, text=True,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": ""}, timeout=120)
    return done.returncode, done.stdout, done.stderr


def expect(condition, what, output):
    if not condition:
        sys.exit(f"FAILED: {what}\n--- output:\n{output}")


def series3_torch():
    status, out, err = run("series3_torch.py", "plan", os.path.join(SERIES3, "results.json"))
    expect(status == 0, "plan exits 0", out + err)
    lines = out.splitlines()
    expect(len(lines) == 7, "plan lists the 7 variants of series 3", out)
    # naive: the cold call, 1 warm-up, 184 host samples, 173 device iterations in 20 batches (each
    # with one unmeasured call), 3 traced iterations: 1 + 1 + 184 + 173 + 20 + 3.
    expect(lines[0].split() == ["naive", "382", "forwards:", "1", "skipped,", "1", "warm-up,", "380", "recorded"],
           "plan counts naive's forwards as expr's worker ran them", out)
    with tempfile.TemporaryDirectory() as tmp:
        missing = os.path.join(tmp, "traces", "here")
        status, out, err = run("series3_torch.py", "profile", os.path.join(SERIES3, "results.json"), missing)
        expect(status == 1 and "needs" in err and "Traceback" not in err, "profile without a GPU stops with one line", out + err)
        expect(os.path.isdir(missing), "profile makes its output directory when it does not exist", out + err)
        a_file = os.path.join(tmp, "a_file")
        open(a_file, "w").close()
        status, out, err = run("series3_torch.py", "profile", os.path.join(SERIES3, "results.json"), a_file)
        expect(status == 1 and "cannot make the output directory" in err, "profile refuses an output path that is a file", out + err)
    status, out, err = run("series3_torch.py", "profile", os.path.join(SERIES3, "results.json"))
    expect(status == 2 and "series3_torch.py profile RUN_DIR" in err, "a missing argument prints the usage and exits 2", out + err)


def counters_vs_ncu():
    status, out, err = run("counters_vs_ncu.py", "cost", COUNTERS, SERIES3, SERIES3)
    expect(status in (0, 1) and not err, "cost reads three recorded runs", out + err)
    rows = [line for line in out.splitlines() if line.startswith("| sdpa_flash |")]
    expect(len(rows) == 2, "cost has a device and a host row for sdpa_flash", out)
    expect(rows[0].startswith("| sdpa_flash | collected | 1 | 11 | 466.2 ms | device | 94.0 µs | 93.5 µs | +0.45% | +0.00% |"),
           "cost reads the counters phase and both medians of sdpa_flash", out)


def first_call():
    status, out, err = run("first_call.py", "--dry-run", "sdpa_flash", "naive", "--results", os.path.join(SERIES3, "results.json"))
    expect(status == 0, "--dry-run exits 0", out + err)
    lines = out.splitlines()
    expect(len(lines) == 2, "--dry-run lists the two variants asked for", out)
    expect(lines[0].startswith("naive ") and '"inplace": false' in lines[0] and "expr (1 runs)" in lines[0]
           and "203.006 ms" in lines[0], "--dry-run shows naive's parameters and its recorded first_call", out)
    status, out, err = run("first_call.py", "--dry-run", "no_such_variant")
    expect(status == 1 and "unknown variants: no_such_variant" in err, "an unknown variant is refused", out + err)


def torch_profiler_overhead():
    status, out, err = run("torch_profiler_overhead.py", "100", "many")
    expect(status == 2, "a repeat count that is no number prints the usage and exits 2", out + err)
    status, out, err = run("torch_profiler_overhead.py", "100", "2")
    expect(status == 1 and "needs" in err and "Traceback" not in err, "without a GPU it stops with one line", out + err)


CHECKS = {f.__name__: f for f in (series3_torch, counters_vs_ncu, first_call, torch_profiler_overhead)}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CHECKS:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(CHECKS)}")
    CHECKS[sys.argv[1]]()
    print(f"{sys.argv[1]}: the GPU-free part works on the recorded runs")
