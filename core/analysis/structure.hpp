// The shape of an experiment's trace: figures that a later run of the same experiment reproduces
// whatever the timing noise. How many kernels, copies (per kind), memsets, framework ops and plugin
// ranges each traced iteration runs, the main kernel (the one with the most device time) with
// its footprint, occupancy and launch API, and its memory: the peak, the allocations asked of the
// framework's allocator and those that reached the driver. The history keeps it for every run, and `expr compare`
// reports every difference beside the timing verdicts: a copy that appears is a regression even
// when the timing cannot show it.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "outcome/measurement.hpp"

namespace expr::analysis {

struct StructureFigure {
  std::string name;  // "kernels", "copies DtoD", "memsets", "op aten::clone", "range copy", "main kernel", ...
  std::variant<double, std::string> value;  // counts are per traced iteration
  std::string detail;  // what in the trace it is: "256 MiB each, issued by aten::copy_ in aten::clone in aten::masked_fill"
};

struct Structure {
  bool traced = false;         // false: nothing was traced (the experiment failed, or was recorded without a trace)
  bool device_traced = false;  // kernels, copies, memsets and the main kernel are known
  bool ops_traced = false;     // framework ops are known
  bool allocator_traced = false;      // the memory figures of the framework's allocator are known
  bool driver_memory_traced = false;  // the driver's allocations are known
  std::vector<StructureFigure> figures;

  const StructureFigure* find(const std::string& name) const;
  // Whether `figure` was observed on this side: a count absent from a traced side is a zero.
  bool covers(const std::string& figure) const;
};

// Reads the experiment's trace; throws std::runtime_error when its trace file cannot be read.
Structure structure(const outcome::Measurement& m);

// Where a figure comes from: the device's records, the framework allocator's events, the driver's
// allocations, framework ops ("op NAME"), the plugin's ranges ("range NAME"). Reports list them in
// this order.
enum class FigureSource { device, allocator, driver_memory, op, range };
FigureSource source_of(const std::string& figure);

// A figure's value as reports print it: "256 MiB" for sizes, plain numbers otherwise.
std::string figure_text(const std::string& figure, const std::variant<double, std::string>& value);

// Which way a figure gets worse: counts when there are more, occupancy when it is lower, the main
// kernel's name, footprint and launch API whenever they change.
enum class Worse { more, less, changed };
Worse worse_when(const std::string& figure);

}  // namespace expr::analysis
