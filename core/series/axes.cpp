// Sweep axes as written: reading `axes:`, `zip:` and `exclude:`, their generators, and the --axis
// option (their expansion into points is sweep.cpp's).
#include "series/axes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "series/plan.hpp"
#include "util/text.hpp"

namespace expr::series {

namespace {

std::int64_t whole_number(const std::string& text, const std::string& what) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) throw std::invalid_argument(fmt::format("{} must be a whole number, not '{}'", what, util::shortened(text)));
  return v;
}

// A scalar or a list of scalars, each with its place.
std::vector<Located<std::string>> scalars(const YAML::Node& n, NodeReader& reader, const std::string& what) {
  std::vector<Located<std::string>> out;
  const auto one = [&](const YAML::Node& v) {
    if (v.IsScalar()) out.push_back({v.Scalar(), reader.pos(v)});
    else reader.problem(reader.pos(v), fmt::format("{} must be single values, not a {}", what, v.IsMap() ? "mapping" : "list"));
  };
  if (n.IsSequence()) for (const auto& v : n) one(v);
  else one(n);
  return out;
}

// `kind(arguments)`: the arguments of a generator call, or nothing when `text` is not one.
std::optional<std::string> generator_arguments(std::string_view text, std::string_view kind) {
  const auto written = util::trimmed(text);
  if (written.substr(0, kind.size()) != kind) return std::nullopt;
  const auto call = util::trimmed(written.substr(kind.size()));
  if (call.size() < 2 || call.front() != '(' || call.back() != ')') return std::nullopt;
  return std::string(call.substr(1, call.size() - 2));
}

// A generator counted to more values than `limit`, refused before any is made.
std::invalid_argument too_many_values(const std::string& text, const std::string& count, std::size_t limit) {
  return std::invalid_argument(fmt::format("'{}' expands to {} values, more than max_points ({}); narrow it, or raise 'max_points' "
                                           "at the top of the series file (at most {})",
                                           util::shortened(text), count, limit, max_points_ceiling));
}

}  // namespace

std::vector<std::string> axis_values(const std::string& text, std::size_t limit) {
  std::string kind, arguments;
  for (const std::string_view generator : {"range", "pow2"})
    if (auto written = generator_arguments(text, generator); written && kind.empty()) {
      kind = generator;
      arguments = std::move(*written);
    }
  if (kind.empty()) return {text};
  std::vector<std::int64_t> args;
  for (std::size_t start = 0; start <= arguments.size();) {
    const auto comma = std::min(arguments.find(',', start), arguments.size());
    auto arg = arguments.substr(start, comma - start);
    arg.erase(0, arg.find_first_not_of(' '));
    arg.erase(arg.find_last_not_of(' ') + 1);
    args.push_back(whole_number(arg, fmt::format("an argument of {}()", kind)));
    start = comma + 1;
  }
  std::vector<std::string> out;
  if (kind == "range") {
    if (args.size() != 3) throw std::invalid_argument("range takes three whole numbers: range(start, stop, step), stop included");
    if (args[2] <= 0) throw std::invalid_argument("the step of range() must be positive");
    if (args[0] <= args[1]) {
      // Counted in unsigned arithmetic, which holds any stop - start, before anything is made; each
      // value is start + i * step, which never passes stop, so nothing overflows near its limits.
      const auto span = static_cast<std::uint64_t>(args[1]) - static_cast<std::uint64_t>(args[0]);
      const auto step = static_cast<std::uint64_t>(args[2]);
      const auto last = span / step;  // the values are i = 0 .. last
      if (last >= limit) throw too_many_values(text, last < UINT64_MAX ? fmt::format("{}", last + 1) : std::string("2^64"), limit);
      for (std::uint64_t i = 0; i <= last; ++i)
        out.push_back(std::to_string(static_cast<std::int64_t>(static_cast<std::uint64_t>(args[0]) + i * step)));
    }
  } else {
    if (args.size() != 2) throw std::invalid_argument("pow2 takes two whole numbers: pow2(start, stop), both included");
    if (args[0] <= 0 || args[1] <= 0)
      throw std::invalid_argument(fmt::format("the bounds of pow2() must be positive: '{}' has {}", util::shortened(text),
                                              args[0] <= 0 ? "start " + std::to_string(args[0]) : "stop " + std::to_string(args[1])));
    // Counted by exponent before any value is made, like range(): the exponents of the powers
    // between start and stop, which never passes 2^62 (the largest power an int64 holds), so no
    // doubling overflows whatever stop is.
    const auto ceiling_exponent = [](std::uint64_t v) { return v <= 1 ? 0 : 64 - __builtin_clzll(v - 1); };  // 2^e >= v
    const auto floor_exponent = [](std::uint64_t v) { return 63 - __builtin_clzll(v); };                     // 2^e <= v
    const int first = ceiling_exponent(static_cast<std::uint64_t>(args[0]));
    const int last = floor_exponent(static_cast<std::uint64_t>(args[1]));
    if (last >= first && static_cast<std::size_t>(last - first) >= limit) throw too_many_values(text, std::to_string(last - first + 1), limit);
    for (int e = first; e <= last; ++e) out.push_back(std::to_string(std::int64_t{1} << e));
  }
  if (out.empty()) throw std::invalid_argument(fmt::format("'{}' expands to zero points", util::shortened(text)));
  return out;
}

void read_axes(const YAML::Node& n, NodeReader& reader, bool from_defaults, std::size_t max_points, std::vector<AxisSpec>& out) {
  if (!n.IsMap()) {
    reader.problem(reader.pos(n), "axes must be a mapping: a parameter, then its values (a list, range(...) or pow2(...))");
    return;
  }
  for (const auto& kv : n) {
    const auto name = reader.key_text(kv.first);
    if (!name) continue;
    AxisSpec axis{{*name, reader.pos(kv.first)}, {}, from_defaults};
    for (const auto& written : scalars(kv.second, reader, "axis values")) {
      try {
        for (auto& v : axis_values(written.value, max_points)) axis.values.push_back({std::move(v), written.pos});
      } catch (const std::invalid_argument& e) {
        reader.problem(written.pos, e.what());
      }
    }
    if (axis.values.empty() && kv.second.IsSequence() && kv.second.size() == 0)
      reader.problem(axis.name.pos, fmt::format("axis '{}' has no values: it would expand to zero points", axis.name.value));
    auto same = std::find_if(out.begin(), out.end(), [&](const AxisSpec& a) { return a.name.value == axis.name.value; });
    if (same != out.end()) *same = std::move(axis);  // the experiment's own replaces the default, in place
    else out.push_back(std::move(axis));
  }
}

void read_zip(const YAML::Node& n, NodeReader& reader, std::vector<std::vector<Located<std::string>>>& out) {
  if (!n.IsSequence()) {
    reader.problem(reader.pos(n), "zip must be a list of groups of axes that move together, e.g. zip: [[seq, batch]]");
    return;
  }
  for (const auto& group : n) {
    if (!group.IsSequence() || group.size() < 2) {
      reader.problem(reader.pos(group), "each zip group is a list of two or more axes, e.g. [seq, batch]");
      continue;
    }
    out.push_back(scalars(group, reader, "zip entries"));
  }
}

void read_exclude(const YAML::Node& n, NodeReader& reader, std::vector<Exclusion>& out) {
  if (!n.IsSequence()) {
    reader.problem(reader.pos(n), "exclude must be a list of mappings, e.g. exclude: [{seq: \">4096\", dtype: fp32}]");
    return;
  }
  for (const auto& e : n) {
    if (!e.IsMap() || e.size() == 0) {
      reader.problem(reader.pos(e), "an exclusion is a mapping from axes to the values it leaves out, e.g. {seq: \">4096\", dtype: fp32}");
      continue;
    }
    Exclusion x;
    for (const auto& kv : e)
      if (const auto axis = reader.key_text(kv.first))
        x.conditions.emplace_back(Located<std::string>{*axis, reader.pos(kv.first)}, scalars(kv.second, reader, "excluded values"));
    out.push_back(std::move(x));
  }
}

AxisOverride parse_axis_override(const std::string& option) {
  const auto eq = option.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == option.size())
    throw std::invalid_argument(fmt::format("--axis {}: write --axis NAME=VALUE,VALUE,... (or NAME=range(a,b,step), NAME=pow2(a,b))", option));
  AxisOverride out{"--axis " + option, option.substr(0, eq), {}};
  const auto values = option.substr(eq + 1);
  try {
    // A generator has commas of its own; the series' own max_points is checked when it expands.
    if (values.find('(') != std::string::npos) out.values = axis_values(values, max_points_ceiling);
    else
      for (std::size_t start = 0; start <= values.size();) {
        const auto comma = std::min(values.find(',', start), values.size());
        if (comma == start) throw std::invalid_argument("an empty value");
        out.values.push_back(values.substr(start, comma - start));
        start = comma + 1;
      }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{}: {}", out.option, e.what()));
  }
  return out;
}

std::string identity(const std::string& family, const AxisPoint& point) {
  if (point.empty()) return family;
  std::vector<std::string> parts;
  for (const auto& [name, value] : point) parts.push_back(name + "=" + to_string(value));
  return fmt::format("{}[{}]", family, fmt::join(parts, ","));
}

}  // namespace expr::series
