// Reading a series file (series.hpp): its text, its YAML, and each key checked where it is written.
#include "series/series.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "series/axes.hpp"
#include "trace/counters.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace expr::series {

std::string_view to_string(GuessOrigin origin) { return origin == GuessOrigin::plugin ? "plugin" : "series"; }

std::string_view to_string(DeviceChoice d) {
  switch (d) {
    case DeviceChoice::auto_: return "auto";
    case DeviceChoice::cpu: return "cpu";
    case DeviceChoice::cuda: return "cuda";
  }
  return "?";
}

namespace {

// A memory limit below a megabyte would stop the worker before the plugin is loaded; above a
// pebibyte it is no limit on any machine.
constexpr double min_memory_limit = 0x1p20;
constexpr double max_memory_limit = 0x1p50;

// A series larger than this is no hand-written file (a device such as /dev/zero, say); reading
// stops there rather than filling the memory.
constexpr std::size_t max_series_bytes = 16u << 20;

// A number as written, then an optional unit: "2", "500ms", "1%", "8GiB". std::from_chars rather
// than std::stod, so a value beyond a double ("1e309") is a problem to report, not an exception.
struct Quantity {
  double value = 0;
  std::string unit;
  bool representable = true;  // false for "1e309" or "1e-400": a double holds neither
};

std::optional<Quantity> quantity(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return std::nullopt;
  text.remove_prefix(first);
  // A digit or a point first: no sign, no "inf" or "nan".
  if (!std::isdigit(static_cast<unsigned char>(text[0])) && text[0] != '.') return std::nullopt;
  Quantity q;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), q.value);
  if (ec == std::errc::invalid_argument) return std::nullopt;
  q.representable = ec != std::errc::result_out_of_range;
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  const auto b = unit.find_first_not_of(" \t"), e = unit.find_last_not_of(" \t");
  q.unit = b == std::string_view::npos ? "" : std::string(unit.substr(b, e - b + 1));
  return q;
}

// The line and column (1-based, in bytes) of an offset into a file's text.
util::SourcePos position_of(const std::filesystem::path& file, std::string_view text, std::size_t offset) {
  const auto before = text.substr(0, offset);
  const auto line_start = before.rfind('\n');
  return {file.string(), static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1,
          static_cast<int>(offset - (line_start == std::string_view::npos ? 0 : line_start + 1)) + 1};
}

// Where each byte of a YAML scalar's value was written, the scalar starting at `start` in `text`.
// The value's characters appear there in order, with only what YAML drops or turns into a space
// in between: the opening quote, a block scalar's header line, indentation, line breaks (folded
// into spaces by `>` and by plain and quoted scalars) and, in quoted scalars, doubled quotes and
// escaping backslashes. Nothing when the value cannot be found that way (an escape such as \x41
// stands for another character): then only where the scalar starts is known.
std::optional<std::vector<std::size_t>> align_scalar(std::string_view text, std::size_t start, std::string_view value) {
  std::size_t at = start;
  char quote = 0;
  if (at < text.size() && (text[at] == '"' || text[at] == '\'')) {
    quote = text[at++];
  } else if (at < text.size() && (text[at] == '|' || text[at] == '>')) {
    at = std::min(text.find('\n', at), text.size() - 1) + 1;  // the header: indicators and a comment
  }
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  const auto dropped = [&](char c) { return is_space(c) || (quote != 0 && c == quote) || (quote == '"' && c == '\\'); };
  const auto matches = [&](char v, char t) { return v == t || (is_space(v) && is_space(t)); };
  // Line breaks a block scalar keeps at its end are not looked for: past the last character
  // written, offsets point just after it.
  const std::size_t last = value.find_last_not_of(" \t\r\n");
  std::vector<std::size_t> offsets;
  offsets.reserve(value.size() + 1);
  for (std::size_t i = 0; last != std::string_view::npos && i <= last; ++i) {
    while (at < text.size() && !matches(value[i], text[at]) && dropped(text[at])) ++at;
    if (at >= text.size() || !matches(value[i], text[at])) return std::nullopt;
    offsets.push_back(at++);
  }
  offsets.resize(value.size() + 1, offsets.empty() ? at : offsets.back() + 1);
  return offsets;
}

// Collects problems instead of stopping at the first, so one `expr validate` shows them all.
class Reader final : public NodeReader {
 public:
  explicit Reader(std::shared_ptr<const util::SourceText> source) : source_(std::move(source)) {}

  std::size_t max_points = Series{}.max_points.value;  // the series' own, once read: what one axis may expand to

  // Where the node starts; for a scalar on one line, marking its text, quotes included.
  util::SourcePos pos(const YAML::Node& n) const override {
    auto p = start(n);
    if (p.line == 0 || !n.IsScalar() || n.Scalar().empty()) return p;
    const auto last = origin(n).at(n.Scalar().size() - 1, n.Scalar().size());
    if (last.line != p.line) return p;
    const auto& text = source_->text();
    const auto begin = source_->offset(p.line, p.column);
    const auto end = source_->offset(last.line, last.column) + 1;
    const bool closing_quote = (text[begin] == '"' || text[begin] == '\'') && end < text.size() && text[end] == text[begin];
    p.length = static_cast<int>(end - begin) + (closing_quote ? 1 : 0);
    return p;
  }

  // Where each byte of a scalar's text was written, for problems inside it (a guess).
  util::TextOrigin origin(const YAML::Node& n) const {
    const auto m = n.Mark();
    if (m.is_null() || !n.IsScalar()) return util::TextOrigin(start(n));
    auto offsets = align_scalar(source_->text(), source_->offset(m.line + 1, m.column + 1), n.Scalar());
    if (!offsets) return util::TextOrigin(start(n));
    return util::TextOrigin(source_, std::move(*offsets));
  }

  void problem(const util::SourcePos& p, std::string message) override { problems_.push_back({p, std::move(message)}); }
  void problem(const YAML::Node& n, std::string message) { problem(pos(n), std::move(message)); }
  const std::vector<util::Problem>& problems() const { return problems_; }

  // Reports keys of `map` outside `known`, with the closest known key as a suggestion.
  void only_keys(const YAML::Node& map, const std::vector<std::string>& known, const std::string& where) {
    for (const auto& kv : map) {
      const auto key = key_text(kv.first);
      if (key && std::find(known.begin(), known.end(), key) == known.end())
        problem(kv.first, fmt::format("unknown key '{}' in {}{}; expected {}", *key, where, util::did_you_mean(*key, known),
                                      util::one_of(known)));
    }
  }

  // Keys given twice in one mapping, anywhere in the document: YAML forbids them, and yaml-cpp
  // would quietly keep the first. Each later one is reported where it is written.
  void duplicate_keys(const YAML::Node& n) {
    if (n.IsSequence())
      for (const auto& item : n) duplicate_keys(item);
    if (!n.IsMap()) return;
    std::map<std::string, YAML::Node> seen;
    for (const auto& kv : n) {
      if (kv.first.IsScalar()) {
        const auto [first, fresh] = seen.emplace(kv.first.Scalar(), kv.first);
        if (!fresh)
          problem(kv.first, fmt::format("key '{}' is given twice in this mapping (first on line {}); YAML allows each key once",
                                        util::shortened(kv.first.Scalar()), first->second.Mark().line + 1));
      }
      duplicate_keys(kv.second);
    }
  }

  // A mapping key as text. A key written as a list or mapping ("? [a, b]") is a problem, not an
  // exception out of yaml-cpp's conversion.
  std::optional<std::string> key_text(const YAML::Node& key) override {
    if (key.IsScalar()) return key.Scalar();
    problem(key, key.IsNull() ? "a key is missing before ':'" : "a key must be a single word, not a list or mapping");
    return std::nullopt;
  }

  bool is_map(const YAML::Node& n, const std::string& what) {
    if (n.IsMap()) return true;
    problem(n, fmt::format("{} must be a mapping (key: value lines)", what));
    return false;
  }

  std::optional<std::string> string(const YAML::Node& n, const std::string& what) {
    if (n.IsScalar()) return n.Scalar();
    problem(n, fmt::format("{} must be a single value, not a {}", what, n.IsMap() ? "mapping" : "list"));
    return std::nullopt;
  }

  std::optional<bool> boolean(const YAML::Node& n, const std::string& what) {
    bool b = false;
    if (n.IsScalar() && YAML::convert<bool>::decode(n, b)) return b;
    problem(n, fmt::format("{} must be true or false", what));
    return std::nullopt;
  }

  // A number, optionally with a unit: seconds ("2", "2s", "500ms") or a fraction ("0.01", "1%").
  std::optional<double> number(const YAML::Node& n, const std::string& what, bool seconds, double min, double max) {
    const auto expected = fmt::format("{} must be {} between {} and {}", what,
                                      seconds ? "a time in seconds (e.g. 2, 2s, 500ms)" : "a fraction (e.g. 0.01 or 1%)", min, max);
    if (const auto q = n.IsScalar() ? quantity(n.Scalar()) : std::nullopt) {
      const auto& unit = q->unit;
      if (unit.empty() || (seconds ? unit == "s" || unit == "ms" : unit == "%")) {
        if (!q->representable) {
          problem(n, fmt::format("{} '{}' is out of range: {}", what, util::shortened(n.Scalar()), expected));
          return std::nullopt;
        }
        const double v = unit == "ms" ? q->value / 1000 : unit == "%" ? q->value / 100 : q->value;
        if (v >= min && v <= max) return v;
      }
    }
    problem(n, expected);
    return std::nullopt;
  }

  // A size in bytes: "8GiB", "512 MiB", "1.5GiB" or a plain count of bytes.
  std::optional<std::uint64_t> bytes(const YAML::Node& n, const std::string& what) {
    static const std::vector<std::pair<std::string, double>> units{
        {"", 1}, {"B", 1}, {"KiB", 0x1p10}, {"MiB", 0x1p20}, {"GiB", 0x1p30}, {"TiB", 0x1p40}};
    const auto q = n.IsScalar() ? quantity(n.Scalar()) : std::nullopt;
    const auto unit = q ? std::find_if(units.begin(), units.end(), [&](const auto& u) { return u.first == q->unit; }) : units.end();
    if (q && q->representable && unit != units.end()) {
      const double v = q->value * unit->second;
      if (v >= min_memory_limit && v <= max_memory_limit) return static_cast<std::uint64_t>(v);
    }
    problem(n, fmt::format("{} must be a size such as 8GiB or 512MiB (units B, KiB, MiB, GiB, TiB) between {} and {}", what,
                           util::format_bytes(min_memory_limit), util::format_bytes(max_memory_limit)));
    return std::nullopt;
  }

  std::optional<int> count(const YAML::Node& n, const std::string& what, int min, int max) {
    long long v = 0;
    if (n.IsScalar() && YAML::convert<long long>::decode(n, v) && v >= min && v <= max) return static_cast<int>(v);
    problem(n, fmt::format("{} must be a whole number between {} and {}", what, min, max));
    return std::nullopt;
  }

  // on, off, or a list of metrics: the names guesses read (achieved_occupancy, ...) or raw Nsight
  // Compute names (sm__cycles_active.avg), which CUPTI checks against the device when it runs.
  // `c` is the choice so far: its replay stays.
  std::optional<CounterChoice> counters(const YAML::Node& n, CounterChoice c) {
    std::vector<std::string> fields;
    for (const auto& m : trace::counter_metrics) fields.emplace_back(m.field);
    c.metrics.clear();
    if (n.IsScalar()) {
      bool on = false;
      if (!YAML::convert<bool>::decode(n, on)) {
        problem(n, fmt::format("counters must be on, off or a list of metrics ({} or Nsight Compute metric names), not '{}'",
                               util::one_of(fields), util::shortened(n.Scalar())));
        return std::nullopt;
      }
      c.on = on;
      if (on)
        for (const auto& m : trace::counter_metrics) c.metrics.emplace_back(m.nsight);
      return c;
    }
    if (!n.IsSequence() || n.size() == 0) {
      problem(n, "counters must be on, off or a non-empty list of metrics");
      return std::nullopt;
    }
    bool ok = true;
    for (const auto& e : n) {
      const auto name = string(e, "a counter metric");
      if (!name) {
        ok = false;
        continue;
      }
      std::string nsight;
      if (const auto* m = trace::counter_metric_by_field(*name)) nsight = m->nsight;
      else if (trace::is_nsight_metric_name(*name)) nsight = *name;
      else {
        problem(e, fmt::format("unknown counter metric '{}'{}; expected {} or an Nsight Compute metric name such as "
                               "sm__cycles_active.avg (unit__counter.rollup)",
                               util::shortened(*name), util::did_you_mean(*name, fields), util::one_of(fields)));
        ok = false;
        continue;
      }
      if (std::find(c.metrics.begin(), c.metrics.end(), nsight) != c.metrics.end()) {
        problem(e, fmt::format("counter metric '{}' is listed twice", *name));
        ok = false;
        continue;
      }
      c.metrics.push_back(std::move(nsight));
    }
    if (!ok) return std::nullopt;
    c.on = true;
    return c;
  }

  std::optional<trace::CounterReplay> counters_replay(const YAML::Node& n) {
    const auto s = string(n, "counters_replay");
    if (!s) return std::nullopt;
    if (const auto replay = trace::counter_replay_from(*s)) return replay;
    problem(n, fmt::format("counters_replay must be kernel or iteration, not '{}'{}", util::shortened(*s),
                           util::did_you_mean(*s, {"kernel", "iteration"})));
    return std::nullopt;
  }

  std::optional<DeviceChoice> device(const YAML::Node& n) {
    const auto s = string(n, "device");
    if (!s) return std::nullopt;
    if (*s == "auto") return DeviceChoice::auto_;
    if (*s == "cpu") return DeviceChoice::cpu;
    if (*s == "cuda") return DeviceChoice::cuda;
    problem(n, fmt::format("device must be auto, cpu or cuda, not '{}'{}", *s, util::did_you_mean(*s, {"auto", "cpu", "cuda"})));
    return std::nullopt;
  }

  void iterations(const YAML::Node& n, Iterations& it) {
    if (!is_map(n, "iterations")) return;
    only_keys(n, {"warmup", "traced", "min_samples", "min_time", "max_time", "max_noise", "rounds"}, "iterations");
    if (n["warmup"]) it.warmup = count(n["warmup"], "warmup", 0, 1'000'000).value_or(it.warmup);
    if (n["traced"]) it.traced = count(n["traced"], "traced", 0, 10'000).value_or(it.traced);
    if (n["min_samples"]) it.min_samples = count(n["min_samples"], "min_samples", 1, 100'000'000).value_or(it.min_samples);
    if (n["min_time"]) it.min_time = number(n["min_time"], "min_time", true, 0, 86400).value_or(it.min_time);
    if (n["max_time"]) it.max_time = number(n["max_time"], "max_time", true, 0, 86400).value_or(it.max_time);
    if (n["max_noise"]) it.max_noise = number(n["max_noise"], "max_noise", false, 0, 1).value_or(it.max_noise);
    if (n["rounds"]) it.rounds = count(n["rounds"], "rounds", 1, 100).value_or(it.rounds);
    // Timing stops at max_time whatever else is asked: a min_time beyond it would never be reached,
    // and the samples would be reported as converged when they were cut off.
    if ((n["min_time"] || n["max_time"]) && it.min_time > it.max_time)
      problem(n["min_time"] ? n["min_time"] : n["max_time"],
              fmt::format("min_time ({} s) is above max_time ({} s); timing stops at max_time", it.min_time, it.max_time));
  }

  // The worker times the host and then the device, each for up to max_time: a timeout shorter than
  // both would stop every experiment that does not converge early and lose what it measured.
  void timeout_covers_timing(const YAML::Node& where, const ExperimentSpec& x) {
    if (x.timeout <= 2 * x.iterations.max_time)
      problem(where, fmt::format("timeout ({} s) must be longer than twice max_time ({} s): host and device timing each take up to "
                                 "max_time, and an experiment stopped at its timeout keeps nothing",
                                 x.timeout, x.iterations.max_time));
  }

  void params(const YAML::Node& n, std::vector<std::pair<std::string, RawParam>>& out, bool from_defaults) {
    if (!is_map(n, "params")) return;
    for (const auto& kv : n) {
      const auto name = key_text(kv.first);
      if (!name) continue;
      const auto& key = *name;
      RawParam p{kv.second.IsScalar() ? kv.second.Scalar() : "", kv.second.IsScalar(), pos(kv.second), pos(kv.first), from_defaults};
      auto it = std::find_if(out.begin(), out.end(), [&](auto& e) { return e.first == key; });
      if (it != out.end()) it->second = p;
      else out.emplace_back(key, p);
    }
  }

  void guesses(const YAML::Node& n, std::vector<GuessSpec>& out) {
    if (!n.IsSequence()) {
      problem(n, "expect must be a list of checks, one per line starting with '- '");
      return;
    }
    for (const auto& e : n) {
      if (e.IsScalar()) {
        out.push_back({e.Scalar(), origin(e), false, ""});
        continue;
      }
      if (!is_map(e, "a guess")) continue;
      only_keys(e, {"check", "required", "why"}, "a guess");
      if (!e["check"]) {
        problem(e, "a guess written as a mapping needs 'check: <guess>'");
        continue;
      }
      GuessSpec spec;
      spec.check = string(e["check"], "check").value_or("");
      spec.written = origin(e["check"]);
      if (e["required"]) spec.required = boolean(e["required"], "required").value_or(false);
      if (e["why"]) spec.why = string(e["why"], "why").value_or("");
      out.push_back(std::move(spec));
    }
  }

  // `gates:`: a threshold per timing metric (a fraction: 3% or 0.03) and `structure: true|false`.
  void gates(const YAML::Node& n, Gates& out) {
    if (!is_map(n, "gates")) return;
    auto known = gated_metrics;
    known.push_back("structure");
    only_keys(n, known, "gates");
    for (const auto& metric : gated_metrics)
      if (n[metric]) out.thresholds[metric] = number(n[metric], metric + " (gates)", false, 0, 10).value_or(out.thresholds[metric]);
    if (n["structure"]) out.structure = boolean(n["structure"], "structure (gates)").value_or(out.structure);
  }

  // What the defaults and an experiment both set: where and how it runs. `x` holds what applies so
  // far (the defaults, for an experiment), which each key written here replaces.
  void settings(const YAML::Node& n, ExperimentSpec& x, bool from_defaults) {
    if (n["device"]) x.device = {device(n["device"]).value_or(DeviceChoice::auto_), pos(n["device"])};
    if (n["params"]) params(n["params"], x.params, from_defaults);
    if (n["iterations"]) iterations(n["iterations"], x.iterations);
    if (n["timeout"]) x.timeout = number(n["timeout"], "timeout", true, 0.001, 86400).value_or(x.timeout);
    if (n["memory"]) x.memory = bytes(n["memory"], "memory");
    if (n["counters"]) x.counters = counters(n["counters"], x.counters).value_or(x.counters);
    if (n["counters_replay"]) x.counters.replay = counters_replay(n["counters_replay"]).value_or(x.counters.replay);
    // Checked where timeout or max_time is written, so a problem in the defaults is reported once.
    if (n["timeout"]) timeout_covers_timing(n["timeout"], x);
    else if (const auto it = n["iterations"]; it && it.IsMap() && it["max_time"]) timeout_covers_timing(it["max_time"], x);
  }

  // `axes:`, `zip:` and `exclude:` of the defaults or an experiment (series/axes.hpp).
  void sweep(const YAML::Node& n, ExperimentSpec& x, bool from_defaults) {
    if (n["axes"]) read_axes(n["axes"], *this, from_defaults, max_points, x.axes);
    if (n["zip"]) read_zip(n["zip"], *this, x.zip);
    if (n["exclude"]) read_exclude(n["exclude"], *this, x.exclude);
  }

 private:
  // Where the node starts, with the file's text so that a problem there quotes its line.
  util::SourcePos start(const YAML::Node& n) const {
    const auto m = n.Mark();
    if (m.is_null()) return {source_->name(), 0, 0};
    return {source_->name(), m.line + 1, m.column + 1, 1, source_};
  }

  std::shared_ptr<const util::SourceText> source_;
  std::vector<util::Problem> problems_;
};

// The run directory is named <series>-YYYYMMDD-HHMMSS and each experiment's folder after the
// experiment, so both names must fit in a file name.
constexpr std::size_t run_dir_suffix = std::string_view("-YYYYMMDD-HHMMSS").size();

// The series file's text. A directory, a file that cannot be read and one too large to be a series
// each get their own message.
std::string read_text(const std::filesystem::path& file) {
  const auto fail = [&](const std::string& why) { throw util::InputError({{{file.string(), 0, 0}, why}}); };
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) fail("is a directory, not a series file");
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(fmt::format("cannot open the series file: {}", std::strerror(errno ? errno : ENOENT)));
  std::string text;
  char chunk[65536];
  while (text.size() <= max_series_bytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  if (in.bad()) fail(fmt::format("cannot read the series file: {}", std::strerror(errno ? errno : EIO)));
  if (text.size() > max_series_bytes)
    fail(fmt::format("is larger than {}, too large for a series file", util::format_bytes(max_series_bytes)));
  return text;
}
const std::vector<std::string> top_keys{"series", "description", "plugin_path", "defaults", "experiments", "max_points", "gates"};
const std::vector<std::string> default_keys{"device",          "params", "iterations", "timeout", "memory", "counters",
                                            "counters_replay", "expect", "axes",       "zip",     "exclude"};
const std::vector<std::string> experiment_keys{"name",     "plugin",          "description", "device",         "params",
                                               "iterations", "timeout",       "memory",      "counters",       "counters_replay",
                                               "expect",   "plugin_guesses",  "axes",        "zip",            "exclude",
                                               "sweep_expect"};

// Checked by hand: a letter, then letters, digits and underscores.
bool is_identifier(std::string_view s) {
  const auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return !s.empty() && letter(s[0]) && std::all_of(s.begin(), s.end(), [&](char c) { return letter(c) || digit(c); });
}

// Where a second YAML document starts (its "---" marker: at the start of a line, then a space, a
// tab or the line's end, after a line with content), or npos. Looked for in the text: yaml-cpp's
// LoadAll loops forever on some inputs (fuzz/known/series/load-all-loop).
std::size_t second_document(std::string_view text) {
  bool content = false;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find('\n', at), text.size());
    const auto line = text.substr(at, end - at);
    const bool marker = line.starts_with("---") && (line.size() == 3 || std::string_view(" \t\r").find(line[3]) != std::string_view::npos);
    if (marker && content) return at;
    const auto first = line.find_first_not_of(" \t\r");
    if (!marker && first != std::string_view::npos && line[first] != '#' && line[first] != '%') content = true;
    at = end + 1;
  }
  return std::string_view::npos;
}

// A series name becomes a directory name and a shell word: an identifier that may also hold '-'
// and '.', which cannot climb out ("..") nor pass for an option or a hidden file.
bool is_series_name(std::string_view s) {
  const auto allowed = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; };
  return !s.empty() && s[0] != '.' && s[0] != '-' && std::all_of(s.begin(), s.end(), allowed);
}

// The file's text as YAML, once it is known to be UTF-8 and YAML.
YAML::Node parse(const std::filesystem::path& file, const std::string& text, const std::shared_ptr<const util::SourceText>& source) {
  if (const auto bad = util::first_invalid_utf8(text); bad != std::string::npos)
    throw util::InputError({{position_of(file, text, bad),
                             fmt::format("byte 0x{:02x} is not UTF-8: a series file is UTF-8 text (its strings end up in results.json)",
                                         static_cast<unsigned char>(text[bad]))}});
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw util::InputError({{{file.string(), e.mark.line + 1, e.mark.column + 1, 1, source}, "malformed YAML: " + e.msg}});
  }
}

// `series:`, a name for the run directory and the shell.
void series_name(const YAML::Node& root, Reader& r, Series& s) {
  if (root["series"]) s.name = r.string(root["series"], "series").value_or("");
  else r.problem({s.file.string(), 1, 1}, "missing 'series: <name>'");
  if (s.name.size() > NAME_MAX - run_dir_suffix)
    r.problem(root["series"], fmt::format("the series name is {} bytes long; the run directory is named after it, and with the "
                                          "time stamp it must fit in a file name: at most {} bytes",
                                          s.name.size(), NAME_MAX - run_dir_suffix));
  else if (root["series"] && root["series"].IsScalar() && !is_series_name(s.name))
    r.problem(root["series"], fmt::format("the series name '{}' must be letters, digits, '_', '-' and '.', not starting with '.' or '-': "
                                          "the run directory (runs/NAME-TIME) is named after it",
                                          util::shortened(s.name)));
}

// What the top of the file says of the whole series: its name, description, plugin path, the most
// points it may expand to, and its gates.
void series_keys(const YAML::Node& root, Reader& r, Series& s) {
  series_name(root, r, s);
  if (root["description"]) s.description = r.string(root["description"], "description").value_or("");
  if (const auto p = root["plugin_path"]) {
    auto add = [&](const YAML::Node& n) {
      if (auto dir = r.string(n, "plugin_path entry")) s.plugin_path.push_back(std::filesystem::absolute(s.file.parent_path() / *dir));
    };
    if (p.IsSequence()) for (const auto& n : p) add(n);
    else add(p);
  }
  if (const auto m = root["max_points"])
    s.max_points = {static_cast<std::size_t>(r.count(m, "max_points", 1, static_cast<int>(max_points_ceiling)).value_or(10'000)), r.pos(m)};
  r.max_points = s.max_points.value;
  if (const auto g = root["gates"]) r.gates(g, s.gates);
}

// `defaults:`, what every experiment starts from.
ExperimentSpec defaults(const YAML::Node& root, Reader& r) {
  ExperimentSpec defaults;
  defaults.device.value = DeviceChoice::auto_;
  defaults.timeout = 300;
  if (const auto d = root["defaults"]; d && r.is_map(d, "defaults")) {
    r.only_keys(d, default_keys, "defaults");
    r.settings(d, defaults, true);
    if (d["expect"]) r.guesses(d["expect"], defaults.guesses);  // checked for every experiment
    r.sweep(d, defaults, true);
  }
  return defaults;
}

// An experiment's `name:`: a folder name, an identifier guesses use, and one of a kind in `names`.
void experiment_name(const YAML::Node& e, Reader& r, std::set<std::string>& names, ExperimentSpec& x) {
  if (!e["name"]) return r.problem(e, "an experiment needs 'name: <identifier>'");
  const auto name = r.string(e["name"], "name");
  if (!name) return;
  x.name = {*name, r.pos(e["name"])};
  if (name->size() > NAME_MAX)
    r.problem(e["name"], fmt::format("experiment name '{}' is {} bytes long; its folder in the run directory is named after it, "
                                     "and a file name holds at most {} bytes",
                                     util::shortened(*name), name->size(), NAME_MAX));
  else if (!is_identifier(*name))
    r.problem(e["name"], fmt::format("experiment name '{}' must be an identifier (letters, digits, _), so "
                                     "guesses can refer to it as {}.gpu_time", *name, *name));
  else if (!names.insert(*name).second)
    r.problem(e["name"], fmt::format("a second experiment named '{}'", *name));
}

// One entry of `experiments:`, over the defaults.
ExperimentSpec experiment(const YAML::Node& e, const ExperimentSpec& defaults, Reader& r, std::set<std::string>& names) {
  r.only_keys(e, experiment_keys, "an experiment");
  ExperimentSpec x = defaults;
  experiment_name(e, r, names, x);
  if (!e["plugin"]) r.problem(e, "an experiment needs 'plugin: <plugin name>'");
  else if (auto plugin = r.string(e["plugin"], "plugin")) x.plugin = {*plugin, r.pos(e["plugin"])};
  if (e["description"]) x.description = r.string(e["description"], "description").value_or("");
  r.settings(e, x, false);
  if (e["plugin_guesses"]) x.plugin_guesses = r.boolean(e["plugin_guesses"], "plugin_guesses").value_or(true);
  if (e["expect"]) r.guesses(e["expect"], x.guesses);
  r.sweep(e, x, false);
  if (e["sweep_expect"]) r.guesses(e["sweep_expect"], x.sweep_guesses);
  return x;
}

}  // namespace

Series read(const std::filesystem::path& file) {
  const std::string text = read_text(file);
  const auto source = std::make_shared<const util::SourceText>(file.string(), text);
  const auto root = parse(file, text, source);
  Reader r(source);
  if (const auto at = second_document(text); at != std::string_view::npos)
    r.problem(position_of(file, text, at), "a second YAML document: a series file holds one series, and nothing after its first document would be read");
  r.duplicate_keys(root);
  if (!root.IsMap()) throw util::InputError({{r.pos(root), "a series file is a mapping with keys series, experiments, ..."}});
  r.only_keys(root, top_keys, "the series");
  Series s;
  s.file = file;
  series_keys(root, r, s);
  const auto common = defaults(root, r);
  const auto experiments = root["experiments"];
  if (!experiments) r.problem({file.string(), 1, 1}, "missing 'experiments:' (a list of experiments)");
  else if (!experiments.IsSequence() || experiments.size() == 0) r.problem(experiments, "experiments must be a non-empty list");
  else
    for (std::set<std::string> names; const auto& e : experiments)
      if (r.is_map(e, "an experiment")) s.experiments.push_back(experiment(e, common, r, names));
  if (!r.problems().empty()) throw util::InputError(r.problems());
  return s;
}

}  // namespace expr::series
