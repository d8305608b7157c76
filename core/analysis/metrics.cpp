#include "analysis/metrics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <type_traits>

#include "analysis/measurement_metrics.hpp"
#include "analysis/memory.hpp"
#include "analysis/noise.hpp"
#include "analysis/observe.hpp"
#include "analysis/occupancy.hpp"
#include "analysis/queries.hpp"
#include "trace/counters.hpp"
#include "util/units.hpp"

namespace expr::analysis {

using outcome::Measurement;

namespace {

// The names behind a count, most frequent first: "2× at::native::gemm, 1× softmax". Works for any
// record with a name and an iteration; kernel names are shortened.
template <class Span, class Keep>
std::string breakdown(const trace::Trace& t, const std::vector<Span>& spans, Keep keep) {
  std::map<trace::StringId, std::size_t> by_id;
  for (const auto& s : spans)
    if (s.iteration != trace::none && keep(s)) ++by_id[s.name];
  // Kernels that differ only in template arguments read alike once shortened: count them together.
  std::map<std::string, std::size_t> by_name;
  for (auto [id, n] : by_id) by_name[std::is_same_v<Span, trace::Kernel> ? short_kernel_name(t.strings[id]) : t.strings[id]] += n;
  std::vector<std::pair<std::size_t, const std::string*>> order;
  for (const auto& [name, n] : by_name) order.emplace_back(n, &name);
  std::stable_sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first > b.first; });
  const double iterations = static_cast<double>(t.iterations.size());
  std::string s;
  constexpr std::size_t shown = 8;
  for (std::size_t i = 0; i < order.size() && i < shown; ++i)
    s += fmt::format("{}{}× {}", i ? ", " : "", util::format_number(static_cast<double>(order[i].first) / iterations), *order[i].second);
  if (order.size() > shown) s += fmt::format(", and {} more", order.size() - shown);
  return s;
}

SpanFilter span_filter(const trace::Trace& t, const MetricCall& call) {
  return SpanFilter(t, {arg(call, "name"), arg(call, "op"), arg(call, "api")});
}

// ---- Counts per iteration ---------------------------------------------------------------------

// A per-iteration sum over the records `keep` accepts, with the names behind it as evidence.
template <class Record, class Keep, class Weight>
Observation per_iteration_figure(const trace::Trace& t, const std::vector<Record>& records, Keep keep, Weight weight,
                                 Quantity (*as)(double), std::vector<std::string> caveats) {
  const auto sums = per_iteration(t, records, keep, weight);
  const auto show = [as](double v) { return format(as(v)); };
  std::string evidence = per_iteration_text(sums, show);
  const auto names = breakdown(t, records, keep);
  if (!names.empty()) evidence += " (" + names + " per iteration)";
  return {as(mean(sums)), evidence, std::move(caveats)};
}

Outcome kernels(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  const auto filter = span_filter(t, call);
  return per_iteration_figure(t, t.kernels, [&](const auto& k) { return filter.keeps(k); },
                              [](const auto&) { return 1.0; }, count, device_caveats(t));
}

auto copy_keep(const trace::Trace& t, const MetricCall& call) {
  const auto kind = arg(call, "kind");
  const auto wanted = kind ? trace::copy_kind_from(*kind) : trace::CopyKind::unknown;
  return [filter = span_filter(t, call), kind, wanted](const trace::Copy& c) {
    return (!kind || c.kind == wanted) && filter.keeps(c);
  };
}

Outcome copies(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  return per_iteration_figure(t, t.copies, copy_keep(t, call), [](const auto&) { return 1.0; }, count, device_caveats(t));
}

Outcome copy_bytes(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  return per_iteration_figure(t, t.copies, copy_keep(t, call),
                              [](const trace::Copy& c) { return static_cast<double>(c.bytes); }, bytes, device_caveats(t));
}

Outcome memsets(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  const auto filter = span_filter(t, call);
  return per_iteration_figure(t, t.memsets, [&](const auto& s) { return filter.keeps(s); },
                              [](const auto&) { return 1.0; }, count, device_caveats(t));
}

Outcome memset_bytes(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  const auto filter = span_filter(t, call);
  return per_iteration_figure(t, t.memsets, [&](const auto& s) { return filter.keeps(s); },
                              [](const trace::Memset& s) { return static_cast<double>(s.bytes); }, bytes, device_caveats(t));
}

// Everything the device ran, as the PyTorch profiler counts "GPU activities": kernels, copies
// and memsets.
Outcome activities(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  const auto filter = span_filter(t, call);
  const auto keep = [&](const auto& s) { return filter.keeps(s); };
  const auto one = [](const auto&) { return 1.0; };
  auto sums = per_iteration(t, t.kernels, keep, one);
  for (const auto& more : {per_iteration(t, t.copies, keep, one), per_iteration(t, t.memsets, keep, one)})
    for (std::size_t i = 0; i < sums.size(); ++i) sums[i] += more[i];
  std::string names;
  for (const auto& part : {breakdown(t, t.kernels, keep), breakdown(t, t.copies, keep), breakdown(t, t.memsets, keep)})
    if (!part.empty()) names += (names.empty() ? "" : ", ") + part;
  return Observation{count(mean(sums)),
                     per_iteration_text(sums, [](double v) { return util::format_number(v); }) + (names.empty() ? "" : " (" + names + " per iteration)"),
                     device_caveats(t)};
}

Outcome kernel_time(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  const auto filter = span_filter(t, call);
  return per_iteration_figure(t, t.kernels, [&](const auto& k) { return filter.keeps(k); },
                              [](const auto& k) { return static_cast<double>(k.duration()); }, time_ns, device_caveats(t));
}

Outcome busy_time(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto busy = busy_per_iteration(*m.trace);
  return Observation{time_ns(mean(busy)),
                     per_iteration_text(busy, [](double v) { return util::format_duration(v); }) + " (kernels, copies and memsets, overlaps counted once)",
                     device_caveats(*m.trace)};
}

// Host-side records: API calls, framework ops and plugin ranges, counted per iteration by name.
template <class Record>
Observation host_count(const trace::Trace& t, const std::vector<Record>& records, const std::optional<std::string>& pattern,
                       bool (*eligible)(const Record&), std::vector<std::string> caveats) {
  const SpanFilter names(t, {pattern, {}, {}});
  return per_iteration_figure(t, records, [&](const Record& r) { return eligible(r) && names.name_matches(r.name); },
                              [](const Record&) { return 1.0; }, count, std::move(caveats));
}

Outcome api_calls(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  return host_count<trace::ApiCall>(*m.trace, m.trace->api_calls, arg(call, "name"), [](const trace::ApiCall&) { return true; },
                                    device_caveats(*m.trace));
}

Outcome ops(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::op_trace)) return *u;
  const auto& t = *m.trace;
  const auto pattern = arg(call, "name");
  const auto is_op = [](const trace::HostRange& r) { return r.kind == trace::RangeKind::op; };
  auto o = host_count<trace::HostRange>(t, t.ranges, pattern, is_op, {});
  // An op that calls an op the pattern also matches (aten::var inside aten::var) counts once per
  // level; the evidence says how many were nested, and one example.
  const SpanFilter names(t, {pattern, {}, {}});
  const auto counted = [&](const trace::HostRange& r) { return is_op(r) && names.name_matches(r.name); };
  std::size_t nested = 0;
  std::string example;
  for (const auto& r : t.ranges) {
    if (r.iteration == trace::none || !counted(r)) continue;
    for (auto p = r.parent; p != trace::none; p = t.ranges[static_cast<std::size_t>(p)].parent)  // a parent is opened before its child
      if (const auto& outer = t.ranges[static_cast<std::size_t>(p)]; counted(outer)) {
        if (nested++ == 0) example = fmt::format("{} inside {}", t.strings[r.name], t.strings[outer.name]);
        break;
      }
  }
  if (nested > 0) o.evidence += fmt::format("; {} of them ran inside another op counted ({}), so each level counts", nested, example);
  return o;
}

Outcome ranges(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, std::nullopt)) return *u;
  return host_count<trace::HostRange>(*m.trace, m.trace->ranges, arg(call, "name"),
                                      [](const trace::HostRange& r) { return r.kind == trace::RangeKind::plugin; }, {});
}

// ---- Selectors: one kernel or copy, and a figure of it ------------------------------------------

// The launch APIs used, "cudaLaunchKernel" or "cudaLaunchKernel + cuLaunchKernelEx".
template <class Span>
std::string launch_apis(const trace::Trace& t, const std::vector<const Span*>& spans) {
  std::vector<std::string> names;
  for (const auto* s : spans) {
    std::string name = s->api_call == trace::none ? "unknown" : t.strings[t.api_calls[static_cast<std::size_t>(s->api_call)].name];
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : " + ") + n;
  return joined;
}

template <class Span, class Keep>
std::vector<const Span*> heaviest_group(const std::vector<Span>& spans, Keep keep) {
  std::map<trace::StringId, std::pair<trace::Ns, std::vector<const Span*>>> groups;
  for (const auto& s : spans)
    if (s.iteration != trace::none && keep(s)) {
      auto& g = groups[s.name];
      g.first += s.duration();
      g.second.push_back(&s);
    }
  const std::pair<trace::Ns, std::vector<const Span*>>* best = nullptr;
  for (const auto& [name, g] : groups)
    if (!best || g.first > best->first) best = &g;
  return best ? best->second : std::vector<const Span*>{};
}

template <class Span>
const Span* longest(const std::vector<const Span*>& spans) {
  return *std::max_element(spans.begin(), spans.end(), [](auto* a, auto* b) { return a->duration() < b->duration(); });
}

std::string filter_text(const MetricCall& call) {
  std::string s;
  for (const auto& [k, v] : call.args) s += (s.empty() ? "" : ", ") + k + "=\"" + v + "\"";
  return s;
}

// Why no hardware counter can be read from the experiment, each case with its own reason: a cpu
// run, counters off, counters CUPTI refused, a trace without them.
std::optional<Unavailable> missing_counters(const outcome::Measurement& m, std::string_view field) {
  if (m.device == Device::cpu) return Unavailable{fmt::format("{} needs hardware counters, and the experiment ran on the cpu", field)};
  if (!m.trace) return std::nullopt;  // missing_trace() says why
  const auto& c = m.trace->counters;
  using State = trace::CounterCollection::State;
  switch (c.state) {
    case State::off: return Unavailable{fmt::format("{} needs hardware counters, and {}", field, c.reason)};
    case State::unavailable: return Unavailable{fmt::format("{} needs hardware counters, which were unavailable: {}", field, c.reason)};
    case State::not_taken:
      return Unavailable{fmt::format("{} needs hardware counters, and none were taken: {}", field,
                                     c.reason.empty() ? "the trace was recorded before expr had a counters phase" : c.reason)};
    case State::collected: break;
  }
  return std::nullopt;
}

// A counter of the kernel: the mean over its launches that the counters phase measured.
Outcome counter_figure(const trace::Trace& t, const std::vector<const trace::Kernel*>& group, const trace::CounterMetric& metric,
                       Observation o) {
  const auto& c = t.counters;
  const auto column = std::find(c.metrics.begin(), c.metrics.end(), metric.nsight);
  if (column == c.metrics.end())
    return Unavailable{fmt::format("{} ({}) was not among the counters collected: {}", metric.field, metric.nsight, fmt::join(c.metrics, ", "))};
  const auto index = static_cast<std::size_t>(column - c.metrics.begin());
  std::vector<double> values;
  for (const auto* k : group)
    if (!k->counters.empty() && std::isfinite(k->counters[index])) values.push_back(k->counters[index]);
  if (values.empty())
    return Unavailable{fmt::format("no launch of this kernel in traced iteration {} carries a value of {}", c.iteration, metric.nsight)};
  o.value = Quantity{mean(values) / 100, dimensionless, Display::percent};
  o.evidence += fmt::format("; {} {:.1f}% ({}), mean of {} launch{} of iteration {}, {} replay passes ({} replay)",
                            metric.field, mean(values), metric.nsight, values.size(), values.size() == 1 ? "" : "es", c.iteration, c.passes,
                            trace::to_string(c.replay));
  return o;
}

Outcome kernel(const outcome::Measurement& m, const MetricCall& call) {
  const auto* counter = trace::counter_metric_by_field(call.field);
  if (counter)
    if (auto u = missing_counters(m, call.field)) return *u;
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  const auto filter = span_filter(t, call);
  const auto group = heaviest_group(t.kernels, [&](const auto& k) { return filter.keeps(k); });
  if (group.empty()) {
    // The guess assumed such a kernel runs; the trace says none does. That is a finding, with the
    // kernels that did run as evidence.
    return Observation{std::string("no such kernel"),
                       fmt::format("no kernel matches {}; kernels per iteration: {}", filter_text(call),
                                   breakdown(t, t.kernels, [](const auto&) { return true; })),
                       device_caveats(t), true};
  }
  const auto& k = *longest(group);
  const auto& f = k.footprint;
  const auto name = short_kernel_name(t.strings[k.name]);
  const double launches = static_cast<double>(group.size()) / static_cast<double>(t.iterations.size());
  std::string evidence = fmt::format("{} ({} launches per iteration, {} each; grid {}, block {}, {} registers, {} shared)",
                                     name, util::format_number(launches),
                                     util::format_duration(mean([&] {
                                       std::vector<double> d;
                                       for (auto* s : group) d.push_back(static_cast<double>(s->duration()));
                                       return d;
                                     }())),
                                     f.grid.volume(), f.block.volume(), f.registers_per_thread,
                                     util::format_bytes(f.shared_per_block()));
  Observation o{count(0), evidence, device_caveats(t)};
  const auto& field = call.field;
  if (counter) return counter_figure(t, group, *counter, std::move(o));
  auto occupancy = [&]() -> std::optional<Occupancy> {
    const auto* device = t.device(k.device);
    if (!device) return std::nullopt;
    return theoretical_occupancy(f, *device);
  };
  if (field == "name") o.value = t.strings[k.name];
  else if (field == "registers") o.value = count(f.registers_per_thread);
  else if (field == "block") o.value = count(static_cast<double>(f.block.volume()));
  else if (field == "grid") o.value = count(static_cast<double>(f.grid.volume()));
  else if (field == "shared") o.value = bytes(f.shared_per_block());
  else if (field == "local") o.value = bytes(f.local_per_thread);
  else if (field == "cluster") o.value = count(static_cast<double>(f.cluster.volume()));
  else if (field == "launches") o.value = count(launches);
  else if (field == "launch_api") o.value = launch_apis(t, group);
  else if (field == "op") o.value = std::string(enclosing_op(t, k.api_call));
  else if (field == "duration") {
    std::vector<double> d;
    for (auto* s : group) d.push_back(static_cast<double>(s->duration()));
    o.value = time_ns(mean(d));
  } else {
    const auto occ = occupancy();
    if (!occ) return Unavailable{fmt::format("no properties of device {} were recorded, so occupancy cannot be computed", k.device)};
    o.evidence += fmt::format("; {} blocks/SM, {} of {} warps, limited by {}", occ->blocks_per_sm, occ->warps_per_sm,
                              occ->max_warps_per_sm, to_string(occ->limiter));
    if (!occ->note.empty()) o.caveats.push_back(occ->note);
    if (field == "occupancy") o.value = Quantity{occ->fraction, dimensionless, Display::percent};
    else if (field == "blocks_per_sm") o.value = count(occ->blocks_per_sm);
    else if (field == "warps_per_sm") o.value = count(occ->warps_per_sm);
    else if (field == "limiter") o.value = std::string(to_string(occ->limiter));
  }
  return o;
}

Outcome copy(const outcome::Measurement& m, const MetricCall& call) {
  if (auto u = missing_trace(m, call.metric, Needs::device_trace)) return *u;
  const auto& t = *m.trace;
  const auto group = heaviest_group(t.copies, copy_keep(t, call));
  if (group.empty())
    return Observation{std::string("no such copy"),
                       fmt::format("no copy matches {}; copies per iteration: {}", filter_text(call),
                                   t.copies.empty() ? std::string("none") : breakdown(t, t.copies, [](const auto&) { return true; })),
                       device_caveats(t), true};
  const auto& c = *longest(group);
  Observation o{count(0),
                fmt::format("{} of {} ({} per iteration), issued by {}", t.strings[c.name], util::format_bytes(static_cast<double>(c.bytes)),
                            util::format_number(static_cast<double>(group.size()) / static_cast<double>(t.iterations.size())),
                            enclosing_op(t, c.api_call).empty() ? "no framework op" : std::string(enclosing_op(t, c.api_call))),
                device_caveats(t)};
  if (call.field == "bytes") o.value = bytes(static_cast<double>(c.bytes));
  else if (call.field == "op") o.value = std::string(enclosing_op(t, c.api_call));
  else if (call.field == "launch_api") o.value = launch_apis(t, group);
  else if (call.field == "duration") o.value = time_ns(static_cast<double>(c.duration()));
  return o;
}

// ---- The catalog ----------------------------------------------------------------------------------

const ArgSpec name_arg{"name", ArgKind::pattern, "regex searched in the kernel's demangled name"};
const ArgSpec op_arg{"op", ArgKind::pattern, "regex: keep records launched inside a framework op or plugin range of that name"};
const ArgSpec api_arg{"api", ArgKind::pattern, "regex: keep records launched by an API call of that name"};
const ArgSpec kind_arg{"kind", ArgKind::copy_kind, "copy direction: HtoD, DtoH, DtoD, HtoH, PtoP, ..."};

FieldSpec figure(std::string name, Dimension dim, Display display, std::string doc) {
  return {std::move(name), dim, display, false, std::move(doc)};
}
FieldSpec text_figure(std::string name, std::string doc) { return {std::move(name), dimensionless, Display::number, true, std::move(doc)}; }

std::vector<MetricSpec> build_catalog() {
  const auto counted = figure("", dimensionless, Display::number, "");
  const auto timed = figure("", duration, Display::duration, "");
  const auto sized = figure("", data, Display::bytes, "");
  auto kernel_fields = std::vector<FieldSpec>{
      text_figure("name", "demangled name"),
      figure("registers", dimensionless, Display::number, "registers per thread"),
      figure("block", dimensionless, Display::number, "threads per block"),
      figure("grid", dimensionless, Display::number, "blocks in the grid"),
      figure("shared", data, Display::bytes, "shared memory per block, static and dynamic"),
      figure("local", data, Display::bytes, "local memory per thread"),
      figure("cluster", dimensionless, Display::number, "blocks per cluster"),
      figure("occupancy", dimensionless, Display::percent, "theoretical occupancy from the launch footprint"),
      figure("blocks_per_sm", dimensionless, Display::number, "resident blocks per multiprocessor"),
      figure("warps_per_sm", dimensionless, Display::number, "resident warps per multiprocessor"),
      text_figure("limiter", "what bounds occupancy: threads, registers, shared_memory or blocks"),
      figure("duration", duration, Display::duration, "mean duration of one launch"),
      figure("launches", dimensionless, Display::number, "launches per traced iteration"),
      text_figure("launch_api", "the API call that launched it, e.g. cudaLaunchKernel or cuLaunchKernelEx"),
      text_figure("op", "the innermost framework op around its launch")};
  for (const auto& m : trace::counter_metrics)
    kernel_fields.push_back(figure(std::string(m.field), dimensionless, Display::percent,
                                   fmt::format("{}; Nsight Compute's {}; needs `counters: on`", m.doc, m.nsight)));
  std::vector<MetricSpec> specs{
      {"kernels", "kernels per traced iteration", {name_arg, op_arg, api_arg}, {}, counted, kernels},
      {"activities", "kernels, copies and memsets per traced iteration (the PyTorch profiler's \"GPU activities\")",
       {name_arg, op_arg, api_arg}, {}, counted, activities},
      {"copies", "memory copies per traced iteration", {kind_arg, name_arg, op_arg, api_arg}, {}, counted, copies},
      {"copy_bytes", "bytes copied per traced iteration", {kind_arg, name_arg, op_arg, api_arg}, {}, sized, copy_bytes},
      {"memsets", "memsets per traced iteration", {name_arg, op_arg, api_arg}, {}, counted, memsets},
      {"memset_bytes", "bytes set per traced iteration", {name_arg, op_arg, api_arg}, {}, sized, memset_bytes},
      {"api_calls", "CUDA runtime and driver API calls per traced iteration",
       {{"name", ArgKind::pattern, "regex searched in the API call's name"}}, {}, counted, api_calls},
      {"ops", "framework ops (e.g. aten::copy_) per traced iteration, nested ones included",
       {{"name", ArgKind::pattern, "regex searched in the op's name"}}, {}, counted, ops},
      {"ranges", "plugin ranges per traced iteration", {{"name", ArgKind::pattern, "regex searched in the range's name"}}, {},
       counted, ranges},
      {"kernel_time", "summed kernel durations per traced iteration", {name_arg, op_arg, api_arg}, {}, timed, kernel_time},
      {"busy_time", "time the device was busy per traced iteration (kernels, copies, memsets; overlaps once)", {}, {}, timed,
       busy_time},
      {"kernel",
       "the kernel that takes the most device time among those that match; its figures",
       {name_arg, op_arg, api_arg},
       kernel_fields,
       {},
       kernel},
      {"copy",
       "the copy that takes the most device time among those that match; its figures",
       {kind_arg, name_arg, op_arg, api_arg},
       {figure("bytes", data, Display::bytes, "bytes of its largest instance"),
        figure("duration", duration, Display::duration, "duration of its longest instance"),
        text_figure("op", "the innermost framework op around it"),
        text_figure("launch_api", "the API call that issued it")},
       {},
       copy},
  };
  for (auto families : {measurement_metrics(), memory_metrics()})
    for (auto& spec : families) specs.push_back(std::move(spec));
  return specs;
}

}  // namespace

const FieldSpec* MetricSpec::field(std::string_view name) const {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

const ArgSpec* MetricSpec::arg(std::string_view name) const {
  for (const auto& a : args)
    if (a.name == name) return &a;
  return nullptr;
}

const std::vector<MetricSpec>& catalog() {
  static const auto specs = build_catalog();
  return specs;
}

const MetricSpec* find_metric(std::string_view name) {
  for (const auto& s : catalog())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> metric_names() {
  std::vector<std::string> names;
  for (const auto& s : catalog()) names.push_back(s.name);
  return names;
}

const FieldSpec& result_type(const MetricSpec& spec, const MetricCall& call) {
  if (const auto* f = spec.field(call.field)) return *f;
  return spec.result;
}

const std::string_view cold_doc =
    "cold.METRIC\n"
    "    any metric above over the experiment's cold first call, traced in a second, fresh worker (setup, then\n"
    "    that one call with host ranges, framework ops and device activity): cold.ops(\"...\"),\n"
    "    cold.api_calls(\"...\"), cold.busy_time, cold.host_time (its run(), tracing on), cold.first_call\n"
    "    (with the device's work). Taken only when a guess reads it; the timed first_call stays untraced.";

Outcome evaluate(const outcome::Measurement& m, const MetricCall& call) {
  const auto* spec = find_metric(call.metric);
  if (!spec) return Unavailable{fmt::format("unknown metric {}", call.metric)};
  if (!call.cold) return spec->compute(m, call);
  if (auto u = not_ran(m)) return *u;
  if (!m.cold) return Unavailable{"this run has no cold trace of the experiment: no guess read cold.* when it ran"};
  const auto& cold = *m.cold;
  if (cold.status != outcome::Status::ok)
    return Unavailable{fmt::format("the cold call's worker {}: {}", outcome::to_string(cold.status), cold.reason)};
  auto outcome = spec->compute(cold, call);
  if (auto* u = std::get_if<Unavailable>(&outcome)) u->reason = "the cold call: " + u->reason;
  return outcome;
}

}  // namespace expr::analysis
