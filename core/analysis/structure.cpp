// The structural figures of a trace.
#include "analysis/structure.hpp"

#include <fmt/format.h>

#include <map>

#include "analysis/metrics.hpp"
#include "analysis/queries.hpp"
#include "util/units.hpp"

namespace expr::analysis {

namespace {

constexpr std::string_view main_kernel = "main kernel";
constexpr std::string_view peak_memory = "peak memory";
constexpr std::string_view allocations = "allocations";
constexpr std::string_view driver_allocations = "driver allocations";

// The framework ops around a launching API call, innermost first: "aten::copy_ in aten::clone in
// aten::masked_fill"; "no framework op" when there is none.
std::string op_chain(const trace::Trace& t, std::int32_t api_call) {
  std::string chain;
  if (api_call != trace::none)
    for (auto r = t.api_calls[static_cast<std::size_t>(api_call)].range; r != trace::none; r = t.ranges[static_cast<std::size_t>(r)].parent) {
      const auto& range = t.ranges[static_cast<std::size_t>(r)];
      if (range.kind == trace::RangeKind::op) chain += (chain.empty() ? "" : " in ") + t.strings[range.name];
    }
  return chain.empty() ? "no framework op" : chain;
}

// A figure read through the metric catalog, so it means exactly what a guess reading it means.
std::variant<double, std::string> figure(const outcome::Measurement& m, MetricCall call) {
  const auto o = evaluate(m, call);
  const auto* obs = std::get_if<Observation>(&o);
  if (!obs) return std::string("—");
  if (const auto* q = std::get_if<Quantity>(&obs->value)) return q->value;
  return std::get<std::string>(obs->value);
}

double number(const std::variant<double, std::string>& v) { return std::holds_alternative<double>(v) ? std::get<double>(v) : 0; }

}  // namespace

const StructureFigure* Structure::find(const std::string& name) const {
  for (const auto& f : figures)
    if (f.name == name) return &f;
  return nullptr;
}

FigureSource source_of(const std::string& figure) {
  if (figure.starts_with("op ")) return FigureSource::op;
  if (figure.starts_with("range ")) return FigureSource::range;
  if (figure == peak_memory || figure == allocations) return FigureSource::allocator;
  if (figure == driver_allocations) return FigureSource::driver_memory;
  return FigureSource::device;
}

std::string figure_text(const std::string& figure, const std::variant<double, std::string>& value) {
  if (const auto* d = std::get_if<double>(&value)) return figure == peak_memory ? util::format_bytes(*d) : util::format_number(*d);
  return std::get<std::string>(value);
}

bool Structure::covers(const std::string& figure) const {
  if (!traced) return false;
  switch (source_of(figure)) {
    case FigureSource::op: return ops_traced;
    case FigureSource::range: return true;
    case FigureSource::device: return device_traced;
    case FigureSource::allocator: return allocator_traced;
    case FigureSource::driver_memory: return driver_memory_traced;
  }
  return false;
}

Worse worse_when(const std::string& figure) {
  if (figure == fmt::format("{} occupancy", main_kernel)) return Worse::less;
  if (figure.starts_with(main_kernel)) return Worse::changed;
  return Worse::more;
}

Structure structure(const outcome::Measurement& m) {
  Structure s;
  if (!m.trace || m.status != outcome::Status::ok) return s;
  const auto& t = *m.trace;
  if (t.iterations.empty()) return s;
  s.traced = true;
  s.device_traced = t.collection.device_traced;
  s.ops_traced = t.collection.ops_traced;
  s.allocator_traced = t.collection.allocator_traced;
  s.driver_memory_traced = t.collection.device_traced && t.collection.driver_memory_traced;
  const double iterations = static_cast<double>(t.iterations.size());

  if (s.device_traced) {
    s.figures.push_back({"kernels", figure(m, {"kernels", {}, ""}), ""});
    // One figure per copy kind that ran, with the bytes of a copy and the ops that issued it.
    std::map<trace::CopyKind, std::vector<const trace::Copy*>> by_kind;
    for (const auto& c : t.copies)
      if (c.iteration != trace::none) by_kind[c.kind].push_back(&c);
    for (const auto& [kind, copies] : by_kind) {
      const auto* first = copies.front();
      s.figures.push_back({fmt::format("copies {}", trace::to_string(kind)), static_cast<double>(copies.size()) / iterations,
                           fmt::format("{} each, issued by {}", util::format_bytes(static_cast<double>(first->bytes)),
                                       op_chain(t, first->api_call))});
    }
    s.figures.push_back({"memsets", figure(m, {"memsets", {}, ""}), ""});
    const auto name = figure(m, {"kernel", {}, "name"});
    if (const auto* n = std::get_if<std::string>(&name); n && *n != "—" && *n != "no such kernel") {
      s.figures.push_back({std::string(main_kernel), short_kernel_name(*n), *n});
      s.figures.push_back({fmt::format("{} footprint", main_kernel),
                           fmt::format("grid {}, block {}, {} registers, {} shared", util::format_number(number(figure(m, {"kernel", {}, "grid"}))),
                                       util::format_number(number(figure(m, {"kernel", {}, "block"}))),
                                       util::format_number(number(figure(m, {"kernel", {}, "registers"}))),
                                       util::format_bytes(number(figure(m, {"kernel", {}, "shared"})))),
                           ""});
      if (const auto occupancy = figure(m, {"kernel", {}, "occupancy"}); std::holds_alternative<double>(occupancy))
        s.figures.push_back({fmt::format("{} occupancy", main_kernel), occupancy, ""});
      s.figures.push_back({fmt::format("{} launch API", main_kernel), figure(m, {"kernel", {}, "launch_api"}), ""});
    }
  }
  if (s.allocator_traced) {
    s.figures.push_back({std::string(peak_memory), figure(m, {"peak_memory", {}, ""}), ""});
    s.figures.push_back({std::string(allocations), figure(m, {"allocations", {}, ""}), ""});
  }
  if (s.driver_memory_traced) s.figures.push_back({std::string(driver_allocations), figure(m, {"driver_allocations", {}, ""}), ""});
  // Host ranges by name: framework ops when an op observer was on, and the plugin's own ranges.
  std::map<std::string, double> ops, ranges;
  for (const auto& r : t.ranges) {
    if (r.iteration == trace::none) continue;
    if (r.kind == trace::RangeKind::op && s.ops_traced) ops[t.strings[r.name]] += 1;
    else if (r.kind == trace::RangeKind::plugin) ranges[t.strings[r.name]] += 1;
  }
  for (const auto& [name, n] : ops) s.figures.push_back({"op " + name, n / iterations, ""});
  for (const auto& [name, n] : ranges) s.figures.push_back({"range " + name, n / iterations, ""});
  return s;
}

}  // namespace expr::analysis
