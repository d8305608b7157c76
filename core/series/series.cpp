#include "series/series.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "series/axes.hpp"
#include "util/text.hpp"

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

// Collects problems instead of stopping at the first, so one `expr validate` shows them all.
class Reader {
 public:
  Reader(std::filesystem::path file, std::string text) : file_(std::move(file)), text_(std::move(text)) {}

  util::SourcePos pos(const YAML::Node& n) const {
    const auto m = n.Mark();
    if (m.is_null()) return {file_.string(), 0, 0};
    return {file_.string(), m.line + 1, m.column + 1};
  }

  // Where a scalar's text starts: after the opening quote of a quoted scalar.
  util::SourcePos text_pos(const YAML::Node& n) const {
    auto p = pos(n);
    const auto m = n.Mark();
    if (!m.is_null() && m.pos >= 0 && static_cast<std::size_t>(m.pos) < text_.size() &&
        (text_[static_cast<std::size_t>(m.pos)] == '"' || text_[static_cast<std::size_t>(m.pos)] == '\''))
      p.column += 1;
    return p;
  }

  void problem(const util::SourcePos& p, std::string message) { problems_.push_back({p, std::move(message)}); }
  void problem(const YAML::Node& n, std::string message) { problem(pos(n), std::move(message)); }
  const std::vector<util::Problem>& problems() const { return problems_; }

  // Reports keys of `map` outside `known`, with the closest known key as a suggestion.
  void only_keys(const YAML::Node& map, const std::vector<std::string>& known, const std::string& where) {
    for (const auto& kv : map) {
      const auto key = kv.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) == known.end())
        problem(kv.first, fmt::format("unknown key '{}' in {}{}; expected {}", key, where, util::did_you_mean(key, known),
                                      util::one_of(known)));
    }
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
    if (n.IsScalar()) {
      static const std::regex re(R"(\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(ms|s|%)?\s*)");
      std::smatch m;
      const std::string s = n.Scalar();
      if (std::regex_match(s, m, re)) {
        double v = std::stod(m[1]);
        const std::string unit = m[2];
        const bool unit_ok = unit.empty() || (seconds ? unit != "%" : unit == "%");
        if (unit == "ms") v /= 1000;
        if (unit == "%") v /= 100;
        if (unit_ok && v >= min && v <= max) return v;
      }
    }
    problem(n, fmt::format("{} must be {} between {} and {}", what, seconds ? "a time in seconds (e.g. 2, 2s, 500ms)" : "a fraction (e.g. 0.01 or 1%)",
                           min, max));
    return std::nullopt;
  }

  std::optional<int> count(const YAML::Node& n, const std::string& what, int min, int max) {
    long long v = 0;
    if (n.IsScalar() && YAML::convert<long long>::decode(n, v) && v >= min && v <= max) return static_cast<int>(v);
    problem(n, fmt::format("{} must be a whole number between {} and {}", what, min, max));
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
    only_keys(n, {"warmup", "traced", "min_samples", "min_time", "max_time", "max_noise"}, "iterations");
    if (n["warmup"]) it.warmup = count(n["warmup"], "warmup", 0, 1'000'000).value_or(it.warmup);
    if (n["traced"]) it.traced = count(n["traced"], "traced", 0, 10'000).value_or(it.traced);
    if (n["min_samples"]) it.min_samples = count(n["min_samples"], "min_samples", 1, 100'000'000).value_or(it.min_samples);
    if (n["min_time"]) it.min_time = number(n["min_time"], "min_time", true, 0, 86400).value_or(it.min_time);
    if (n["max_time"]) it.max_time = number(n["max_time"], "max_time", true, 0, 86400).value_or(it.max_time);
    if (n["max_noise"]) it.max_noise = number(n["max_noise"], "max_noise", false, 0, 1).value_or(it.max_noise);
  }

  void params(const YAML::Node& n, std::vector<std::pair<std::string, RawParam>>& out, bool from_defaults) {
    if (!is_map(n, "params")) return;
    for (const auto& kv : n) {
      const auto key = kv.first.as<std::string>();
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
        out.push_back({e.Scalar(), text_pos(e), false, ""});
        continue;
      }
      if (!is_map(e, "an expectation")) continue;
      only_keys(e, {"check", "required", "why"}, "an expectation");
      if (!e["check"]) {
        problem(e, "an expectation written as a mapping needs 'check: <expectation>'");
        continue;
      }
      GuessSpec spec;
      spec.check = string(e["check"], "check").value_or("");
      spec.pos = text_pos(e["check"]);
      if (e["required"]) spec.required = boolean(e["required"], "required").value_or(false);
      if (e["why"]) spec.why = string(e["why"], "why").value_or("");
      out.push_back(std::move(spec));
    }
  }

  const std::filesystem::path& file() const { return file_; }

  // `axes:`, `zip:` and `exclude:` of the defaults or an experiment (series/axes.hpp).
  void sweep(const YAML::Node& n, ExperimentSpec& x, bool from_defaults) {
    std::vector<util::Problem> found;
    if (n["axes"]) read_axes(n["axes"], file_.string(), from_defaults, x.axes, found);
    if (n["zip"]) read_zip(n["zip"], file_.string(), x.zip, found);
    if (n["exclude"]) read_exclude(n["exclude"], file_.string(), x.exclude, found);
    problems_.insert(problems_.end(), found.begin(), found.end());
  }

 private:
  std::filesystem::path file_;
  std::string text_;
  std::vector<util::Problem> problems_;
};

const std::vector<std::string> top_keys{"series", "description", "plugin_path", "defaults", "experiments", "max_points"};
const std::vector<std::string> default_keys{"device", "params", "iterations", "timeout", "expect", "axes", "zip", "exclude"};
const std::vector<std::string> experiment_keys{"name",       "plugin",  "description", "device", "params",         "iterations",
                                               "timeout",    "expect",  "plugin_guesses", "axes", "zip", "exclude", "sweep_expect"};

bool is_identifier(const std::string& s) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(s, re);
}

}  // namespace

Series read(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw util::InputError({{{file.string(), 0, 0}, "cannot open the series file"}});
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();

  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw util::InputError({{{file.string(), e.mark.line + 1, e.mark.column + 1}, "malformed YAML: " + e.msg}});
  }
  Reader r(file, text);
  Series s;
  s.file = file;
  if (!root.IsMap()) throw util::InputError({{r.pos(root), "a series file is a mapping with keys series, experiments, ..."}});
  r.only_keys(root, top_keys, "the series");

  if (root["series"]) s.name = r.string(root["series"], "series").value_or("");
  else r.problem({file.string(), 1, 1}, "missing 'series: <name>'");
  if (root["description"]) s.description = r.string(root["description"], "description").value_or("");

  if (const auto p = root["plugin_path"]) {
    auto add = [&](const YAML::Node& n) {
      if (auto dir = r.string(n, "plugin_path entry")) s.plugin_path.push_back(std::filesystem::absolute(file.parent_path() / *dir));
    };
    if (p.IsSequence()) for (const auto& n : p) add(n);
    else add(p);
  }

  if (const auto m = root["max_points"])
    s.max_points = {static_cast<std::size_t>(r.count(m, "max_points", 1, 100'000'000).value_or(10'000)), r.pos(m)};

  ExperimentSpec defaults;
  defaults.device.value = DeviceChoice::auto_;
  defaults.timeout = 300;
  if (const auto d = root["defaults"]; d && r.is_map(d, "defaults")) {
    r.only_keys(d, default_keys, "defaults");
    if (d["device"]) defaults.device = {r.device(d["device"]).value_or(DeviceChoice::auto_), r.pos(d["device"])};
    if (d["params"]) r.params(d["params"], defaults.params, true);
    if (d["iterations"]) r.iterations(d["iterations"], defaults.iterations);
    if (d["timeout"]) defaults.timeout = r.number(d["timeout"], "timeout", true, 0.001, 86400).value_or(defaults.timeout);
    if (d["expect"]) r.guesses(d["expect"], defaults.guesses);  // checked for every experiment
    r.sweep(d, defaults, true);
  }

  const auto experiments = root["experiments"];
  if (!experiments) r.problem({file.string(), 1, 1}, "missing 'experiments:' (a list of experiments)");
  else if (!experiments.IsSequence() || experiments.size() == 0) r.problem(experiments, "experiments must be a non-empty list");
  else {
    std::set<std::string> names;
    for (const auto& e : experiments) {
      if (!r.is_map(e, "an experiment")) continue;
      r.only_keys(e, experiment_keys, "an experiment");
      ExperimentSpec x = defaults;
      if (!e["name"]) r.problem(e, "an experiment needs 'name: <identifier>'");
      else if (auto name = r.string(e["name"], "name")) {
        x.name = {*name, r.pos(e["name"])};
        if (!is_identifier(*name))
          r.problem(e["name"], fmt::format("experiment name '{}' must be an identifier (letters, digits, _), so "
                                           "expectations can refer to it as {}.gpu_time", *name, *name));
        else if (!names.insert(*name).second)
          r.problem(e["name"], fmt::format("a second experiment named '{}'", *name));
      }
      if (!e["plugin"]) r.problem(e, "an experiment needs 'plugin: <plugin name>'");
      else if (auto plugin = r.string(e["plugin"], "plugin")) x.plugin = {*plugin, r.pos(e["plugin"])};
      if (e["description"]) x.description = r.string(e["description"], "description").value_or("");
      if (e["device"]) x.device = {r.device(e["device"]).value_or(DeviceChoice::auto_), r.pos(e["device"])};
      if (e["params"]) r.params(e["params"], x.params, false);
      if (e["iterations"]) r.iterations(e["iterations"], x.iterations);
      if (e["timeout"]) x.timeout = r.number(e["timeout"], "timeout", true, 0.001, 86400).value_or(x.timeout);
      if (e["plugin_guesses"]) x.plugin_guesses = r.boolean(e["plugin_guesses"], "plugin_guesses").value_or(true);
      if (e["expect"]) r.guesses(e["expect"], x.guesses);
      r.sweep(e, x, false);
      if (e["sweep_expect"]) r.guesses(e["sweep_expect"], x.sweep_guesses);
      s.experiments.push_back(std::move(x));
    }
  }
  if (!r.problems().empty()) throw util::InputError(r.problems());
  return s;
}

}  // namespace expr::series
