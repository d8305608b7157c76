"""TensorBoard's profiler plugin on an expr run directory: its memory view, asked for as TensorBoard's
page asks for it. The plugin (torch_tb_profiler) is loaded from a copy of its source, since PyTorch
no longer ships it (it was removed from Kineto's repository in 2026): TB_PLUGIN names the folder
that holds torch_tb_profiler/. TensorBoard itself and werkzeug come from the machine.

    TB_PLUGIN=DIR python3 bench/tensorboard_memory.py RUN_DIR

The plugin watches RUN_DIR/traces as `tensorboard --logdir RUN_DIR/traces` would; each experiment
is one of its runs. For every experiment whose results.json says the allocator's memory was traced,
the plugin must offer the Memory view, and its three requests (/memory, /memory_curve and
/memory_events, the view's table, curve and event list) must answer 200 with JSON. Prints each
run's peak as the plugin's curve gives it (the allocator's total at its highest, which includes
what was held before the iteration) beside expr's peak_memory (above it). Exits 1 on any failure.
"""
import gzip
import json
import os
import sys
import time


def fail(message):
    sys.exit(f"tensorboard_memory.py: {message}")


def main():
    if len(sys.argv) != 2 or "TB_PLUGIN" not in os.environ:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    run_dir = sys.argv[1]
    sys.path.insert(0, os.environ["TB_PLUGIN"])
    from tensorboard.plugins import base_plugin
    from torch_tb_profiler.plugin import TorchProfilerPlugin
    from werkzeug.test import Client

    with open(os.path.join(run_dir, "results.json")) as f:
        traced = {e["name"]: e["trace"]["allocator_memory"] for e in json.load(f)["experiments"]
                  if "allocator_memory" in e.get("trace", {})}
    if not traced:
        fail(f"{run_dir}: no experiment traced its allocator's memory")

    plugin = TorchProfilerPlugin(base_plugin.TBContext(logdir=os.path.join(run_dir, "traces")))
    apps = plugin.get_plugin_apps()

    def get(route, **args):
        response = Client(apps[route]).get(route, query_string=args)
        if response.status_code != 200:
            fail(f"{route} {args}: HTTP {response.status_code}: {response.get_data(as_text=True)[:300]}")
        body = response.get_data()
        if response.headers.get("Content-Encoding") == "gzip":  # the plugin compresses its larger answers
            body = gzip.decompress(body)
        return json.loads(body)

    deadline = time.time() + 300
    while True:
        runs = get("/runs")
        if not runs["loading"] and set(traced) <= set(runs["runs"]):
            break
        if time.time() > deadline:
            fail(f"the plugin loaded {runs['runs']} in 300 s, not every experiment of {sorted(traced)}")
        time.sleep(1)

    print("| experiment | plugin's views | plugin's memory curve peak | expr peak_memory |")
    print("| --- | --- | --- | --- |")
    for name, ours in sorted(traced.items()):
        views = get("/views", run=name)
        if "Memory" not in views:
            fail(f"{name}: the plugin offers no Memory view (views: {views})")
        worker = get("/workers", run=name, view="Memory")[0]
        spans = get("/spans", run=name, worker=worker)
        where = {"run": name, "worker": worker, "span": spans[0] if spans else ""}
        get("/memory", **where)
        curve = get("/memory_curve", **where)
        events = get("/memory_events", **where)
        if not events.get("rows"):
            fail(f"{name}: the Memory view lists no allocation event")
        peaks = curve["metadata"]["peaks"]
        device = curve["metadata"]["default_device"]
        print(f"| {name} | {', '.join(views)} | {device}: {peaks.get(device, 'none')} | {ours['peak_bytes'] / (1 << 20):.1f} MiB |", flush=True)
    print(f"the Memory view answered for {len(traced)} experiments")


if __name__ == "__main__":
    main()
