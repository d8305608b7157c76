// report.html: a run as one page that opens offline in a browser (no script, no network, no other
// file). For each swept axis, plots of the main figures (device time, host time, TFLOP/s, GB/s,
// occupancy) with one line per experiment family and the noise drawn, and the guesses about whole
// sweeps drawn on their plots; then the guess-vs-trace tables, the experiments side by side and the
// environment. The same plots are kept as SVG files for Markdown (docs/report.md).
#pragma once

#include <string>
#include <vector>

#include "report/run_result.hpp"
#include "report/table.hpp"

namespace expr::report {

struct Plot {
  std::string file;   // its name under the run directory's plots/: "seq-gpu_time-dtype_bf16.svg"
  std::string axis;   // the axis along x
  std::string panel;  // the values of the sweep's other axes, "dtype=bf16"; empty when it has none
  std::string svg;    // a complete <svg> element
};

// The plots of the run's sweeps: by axis, then panel, then figure. None for a run without axes.
// Numeric axes go along x (log scale for powers of two, and then times on a log scale too);
// categorical ones split the plots into panels, and go along x only in a sweep with no numeric axis.
std::vector<Plot> sweep_plots(const RunResult& run);

// A section that a later stage puts on the page, first after its header: the gate's verdict
// against a baseline (history/, session/gate.hpp). `body` is HTML, its text escaped by its maker.
struct PageSection {
  std::string id, heading, body;
};

// The page, with `plots` inlined and `first` before the plots.
std::string html_report(const RunResult& run, const std::vector<Plot>& plots, const std::vector<PageSection>& first = {});

// A whole page in report.html's style, `body` its content: for other pages made of runs (`expr across`).
std::string html_page(const std::string& title, const std::string& body);
// A table, its cells escaped, scrolling sideways when it is wider than the page.
std::string html_table(const Table& t);

}  // namespace expr::report
