// `expr new`: a plugin project that builds against the installed expr and runs as it stands, and
// a commented series file. The templates show the final hooks (expr/plugin.hpp): setup prepares
// inputs only, run is the measured work, verify checks the first call's output.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <fstream>

#include "cli/commands.hpp"
#include "loader/plugin_library.hpp"
#include "series/series.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"

namespace expr::cli {

namespace fs = std::filesystem;

namespace {

// ---- The plugin templates -----------------------------------------------------------------------
// @NAME@ is the plugin's name, @CLASS@ its class, @SOURCE@ its source file, @PREFIX@ the prefix of
// the expr that wrote them and @EXPR@ that expr.

constexpr const char* cpu_source = R"(// @NAME@: an expr plugin. z = a*x + y over n floats on the CPU (saxpy), a starting point: replace
// the work, keep the hooks. How each hook is used: expr's docs/writing-plugins.md.
#include <expr/plugin.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

class @CLASS@ final : public expr::Plugin {
 public:
  // In expr's parent process (`expr list`, `validate`, `run`): the name, parameters and devices.
  expr::Description describe() const override {
    return {"@NAME@",
            "saxpy on the CPU: z = a*x + y over n floats",
            {{"n", expr::ParamType::integer, std::int64_t{1} << 20, "elements", {}},
             {"a", expr::ParamType::number, 2.0, "the scale", {}}},
            {expr::Device::cpu}};
  }

  // Inputs only: setup must not run the measured work, or the cold first call would be warm.
  void setup(expr::Context& ctx, const expr::Params& p) override {
    const auto n = p.integer("n");
    if (n <= 0) throw std::invalid_argument("@NAME@: n must be positive");
    a_ = static_cast<float>(p.number("a"));
    x_.resize(static_cast<std::size_t>(n));
    y_.resize(x_.size());
    z_.assign(x_.size(), NAN);  // allocated here, not in run(): the measured region allocates nothing
    for (std::size_t i = 0; i < x_.size(); ++i) {
      x_[i] = 1.0f + 0.25f * static_cast<float>(i % 7);
      y_[i] = 0.5f * static_cast<float>(i % 3);
    }
    ctx.report_fact("elements", std::to_string(n));
  }

  // The measured region, called many times: the cold first call, warm-up, timing, tracing.
  void run(expr::Context& ctx) override {
    auto range = ctx.range("saxpy");
    for (std::size_t i = 0; i < z_.size(); ++i) z_[i] = a_ * x_[i] + y_[i];
  }

  // Once, right after the cold first call: that call's output against a float64 reference.
  void verify(expr::Context& ctx) override {
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < z_.size(); ++i) {
      const double want = static_cast<double>(a_) * x_[i] + y_[i];
      error += (z_[i] - want) * (z_[i] - want);
      norm += want * want;
    }
    ctx.report_correctness("z vs a float64 reference", std::sqrt(error / norm), 1e-6);
  }

  // In the parent: what the trace should show, judged after the run like the series' guesses.
  std::vector<expr::Guess> guesses(const expr::Params&) const override {
    return {{"ranges(\"^saxpy$\") == 1", "run() opens one range"}};
  }

  // For gbps and tflops: 2 FLOPs an element; x and y read, z written.
  std::optional<expr::Work> work(const expr::Params& p) const override {
    const auto n = static_cast<double>(p.integer("n"));
    return expr::Work{2 * n, 3 * n * sizeof(float)};
  }

 private:
  float a_ = 0;
  std::vector<float> x_, y_, z_;
};

}  // namespace

EXPR_PLUGIN(@CLASS@)
)";

constexpr const char* cpu_series = R"(# @NAME@'s series: what to run and what you expect the trace to show. Run it with
#   @EXPR@ run @NAME@.yaml
# The guesses: expr's docs/expectations.md; `expr metrics` lists what they can ask about.
series: @NAME@
defaults:
  iterations: {warmup: 2, traced: 3, min_samples: 10, min_time: 0.05s, max_time: 1s}
experiments:
  - name: saxpy
    plugin: @NAME@
    params: {n: 1048576}
    expect:
      - check: rel_error < 1e-6
        why: one float rounding an element; the trace should confirm this
      - check: gbps > 1000
        why: wrong on purpose, to show a contradiction; a CPU streams far below 1 TB/s
)";

constexpr const char* torch_source = R"(// @NAME@: an expr plugin on LibTorch. One Linear layer, y = x W^T + b, on the CPU or a GPU, a
// starting point: replace the work, keep the hooks. How each hook is used: expr's
// docs/writing-plugins.md.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <expr/plugin.hpp>
#include <expr_torch/op_tracer.hpp>
#include <expr_torch/tensors.hpp>

#include <cmath>
#include <cstdint>

namespace {

class @CLASS@ final : public expr::Plugin {
 public:
  // In expr's parent process (`expr list`, `validate`, `run`): the name, parameters and devices.
  expr::Description describe() const override {
    return {"@NAME@",
            "one Linear layer: y = x W^T + b",
            {{"batch", expr::ParamType::integer, std::int64_t{512}, "rows of x", {}},
             {"in", expr::ParamType::integer, std::int64_t{1024}, "input features", {}},
             {"out", expr::ParamType::integer, std::int64_t{1024}, "output features", {}},
             {"bias", expr::ParamType::boolean, true, "add a bias", {}},
             {"dtype", expr::ParamType::string, std::string("fp32"), "element type", expr_torch::dtype_names()}},
            expr_torch::supported_devices()};
  }

  // Inputs only: setup must not run the measured work, or the cold first call would be warm.
  // trace_ops first, so expr sees it if setup dispatches the ops run() dispatches.
  void setup(expr::Context& ctx, const expr::Params& p) override {
    expr_torch::trace_ops(ctx);
    c10::NoGradGuard no_grad;
    dtype_ = expr_torch::dtype_of(p.string("dtype"));
    const auto options = at::TensorOptions().dtype(dtype_).device(expr_torch::device_of(ctx));
    const auto in = p.integer("in"), out = p.integer("out");
    at::manual_seed(0);
    x_ = at::randn({p.integer("batch"), in}, options);
    weight_ = at::randn({out, in}, options) / std::sqrt(static_cast<double>(in));
    if (p.boolean("bias")) bias_ = at::randn({out}, options);
    expr_torch::note_versions(ctx);
  }

  // The measured region, called many times: the cold first call, warm-up, timing, tracing. It
  // queues the device's work and returns; expr synchronises where it measures.
  void run(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    auto range = ctx.range("linear");
    y_ = at::linear(x_, weight_, bias_);
  }

  // Once, right after the cold first call: that call's output against a float64 reference.
  void verify(expr::Context& ctx) override {
    c10::NoGradGuard no_grad;
    const auto bias = bias_.defined() ? bias_.to(at::kDouble) : at::Tensor();
    const auto reference = at::linear(x_.to(at::kDouble), weight_.to(at::kDouble), bias);
    ctx.report_correctness("y vs a float64 reference", expr_torch::relative_error(y_, reference), expr_torch::tolerance_for(dtype_));
  }

  // In the parent: what the trace should show, judged after the run like the series' guesses.
  std::vector<expr::Guess> guesses(const expr::Params& p) const override {
    if (p.boolean("bias")) return {{"ops(\"^aten::addmm$\") == 1", "with a bias, linear on a matrix is one addmm"}};
    return {{"ops(\"^aten::addmm$\") == 0", "without a bias there is nothing to add"}};
  }

  // For tflops and gbps: a multiply and an add per weight and row; x, W (and b) read, y written.
  std::optional<expr::Work> work(const expr::Params& p) const override {
    const auto batch = static_cast<double>(p.integer("batch")), in = static_cast<double>(p.integer("in")),
               out = static_cast<double>(p.integer("out"));
    const auto element = static_cast<double>(at::elementSize(expr_torch::dtype_of(p.string("dtype"))));
    return expr::Work{2 * batch * in * out, element * (batch * in + out * in + batch * out + (p.boolean("bias") ? out : 0))};
  }

 private:
  at::ScalarType dtype_ = at::kFloat;
  at::Tensor x_, weight_, bias_, y_;
};

}  // namespace

EXPR_PLUGIN(@CLASS@)
)";

constexpr const char* torch_series = R"(# @NAME@'s series: what to run and what you expect the trace to show. Run it with
#   @EXPR@ run @NAME@.yaml
# The guesses: expr's docs/expectations.md; `expr metrics` lists what they can ask about.
series: @NAME@
defaults:
  iterations: {warmup: 2, traced: 3, min_samples: 10, min_time: 0.05s, max_time: 1s}
experiments:
  - name: linear
    plugin: @NAME@
    params: {batch: 128, in: 512, out: 512, bias: true}
    expect:
      - check: ops("^aten::add_?$") == 0
        why: the bias is added inside the addmm, not by an op of its own; the trace should confirm this
      - check: ops("^aten::matmul$") == 1
        why: wrong on purpose, to show a contradiction; with a bias, linear calls addmm and never matmul
)";

constexpr const char* cuda_source = R"(// @NAME@: an expr plugin with its own CUDA kernel. z = a*x + y over n floats (saxpy), a starting
// point: replace the kernel, keep the hooks. How each hook is used: expr's docs/writing-plugins.md.
#include <cuda_runtime.h>
#include <expr/plugin.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

__global__ void saxpy(std::size_t n, float a, const float* x, const float* y, float* z) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    z[i] = a * x[i] + y[i];
}

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string("@NAME@: ") + what + ": " + cudaGetErrorString(status));
}

class @CLASS@ final : public expr::Plugin {
 public:
  // In expr's parent process (`expr list`, `validate`, `run`): no CUDA call here.
  expr::Description describe() const override {
    return {"@NAME@",
            "saxpy with a CUDA kernel: z = a*x + y over n floats",
            {{"n", expr::ParamType::integer, std::int64_t{1} << 24, "elements", {}},
             {"a", expr::ParamType::number, 2.0, "the scale", {}},
             {"block", expr::ParamType::integer, std::int64_t{256}, "threads a block", {}}},
            {expr::Device::cuda}};
  }

  // Inputs only: setup must not run the measured work, or the cold first call would be warm.
  void setup(expr::Context& ctx, const expr::Params& p) override {
    n_ = static_cast<std::size_t>(p.integer("n"));
    a_ = static_cast<float>(p.number("a"));
    block_ = static_cast<unsigned>(p.integer("block"));
    if (n_ == 0 || block_ == 0 || block_ > 1024) throw std::invalid_argument("@NAME@: n must be positive and block in 1..1024");
    check(cudaSetDevice(ctx.device_index()), "cudaSetDevice");
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device_index()), "cudaDeviceGetAttribute");
    grid_ = static_cast<unsigned>(4 * sms);  // a grid-stride loop: a few blocks per SM cover any n
    x_host_.resize(n_);
    y_host_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      x_host_[i] = 1.0f + 0.25f * static_cast<float>(i % 7);
      y_host_[i] = 0.5f * static_cast<float>(i % 3);
    }
    for (float** buffer : {&x_, &y_, &z_}) check(cudaMalloc(buffer, n_ * sizeof(float)), "cudaMalloc");
    check(cudaMemcpy(x_, x_host_.data(), n_ * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy x");
    check(cudaMemcpy(y_, y_host_.data(), n_ * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy y");
    check(cudaMemset(z_, 0xFF, n_ * sizeof(float)), "cudaMemset z");  // NaN until written
  }

  // The measured region, called many times. It queues the kernel and returns: expr synchronises
  // where it measures, and a synchronisation here would be timed as the kernel's.
  void run(expr::Context& ctx) override {
    auto range = ctx.range("saxpy");
    saxpy<<<grid_, block_>>>(n_, a_, x_, y_, z_);
    check(cudaGetLastError(), "saxpy launch");
  }

  // Once, right after the cold first call: that call's output against a float64 reference.
  void verify(expr::Context& ctx) override {
    std::vector<float> z(n_);
    check(cudaMemcpy(z.data(), z_, n_ * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy z");
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const double want = static_cast<double>(a_) * x_host_[i] + y_host_[i];
      error += (z[i] - want) * (z[i] - want);
      norm += want * want;
    }
    ctx.report_correctness("z vs a float64 reference", std::sqrt(error / norm), 1e-6);
  }

  void teardown(expr::Context&) override {
    for (float* buffer : {x_, y_, z_}) cudaFree(buffer);
    x_ = y_ = z_ = nullptr;
  }

  // In the parent: what the trace should show, judged after the run like the series' guesses.
  std::vector<expr::Guess> guesses(const expr::Params&) const override {
    return {{"kernels(\"saxpy\") == 1", "run() launches one kernel"}};
  }

  // For gbps and tflops: 2 FLOPs an element; x and y read, z written.
  std::optional<expr::Work> work(const expr::Params& p) const override {
    const auto n = static_cast<double>(p.integer("n"));
    return expr::Work{2 * n, 3 * n * sizeof(float)};
  }

 private:
  std::size_t n_ = 0;
  float a_ = 0;
  unsigned block_ = 0, grid_ = 0;
  std::vector<float> x_host_, y_host_;
  float *x_ = nullptr, *y_ = nullptr, *z_ = nullptr;
};

}  // namespace

EXPR_PLUGIN(@CLASS@)
)";

constexpr const char* cuda_series = R"(# @NAME@'s series: what to run and what you expect the trace to show. Run it with
#   @EXPR@ run @NAME@.yaml
# The guesses: expr's docs/expectations.md; `expr metrics` lists what they can ask about.
series: @NAME@
defaults:
  iterations: {warmup: 2, traced: 3, min_samples: 10, min_time: 0.05s, max_time: 1s}
experiments:
  - name: saxpy
    plugin: @NAME@
    params: {n: 16777216}
    expect:
      - check: copies == 0
        why: the inputs were copied in setup; run() moves nothing between host and device
      - check: gpu_time < 10us
        why: wrong on purpose, to show a contradiction; 192 MiB do not pass through HBM in 10 us
)";

// The CMake project: the part between project() and expr_add_plugin differs by kind.
constexpr const char* cmake_project = R"(# @NAME@: an expr plugin, built against an installed expr with find_package(expr).
#   cmake -S . -B build -DCMAKE_PREFIX_PATH=@PREFIX@ && cmake --build build
# The plugin goes to that expr's lib/expr/plugins, where `expr run` finds it. To put it elsewhere,
# configure with -DEXPR_PLUGIN_DIR=DIR and write plugin_path: [DIR] in the series.
# (Below 3.25: Debian 12's CMake 3.25.1 breaks FindCUDAToolkit for CUDA 13 from 3.25 on.)
cmake_minimum_required(VERSION 3.24...3.31)
@PROJECT@
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)  # the measured work is compiled as it will be used
endif()
@FIND@
expr_add_plugin(@NAME@ @SOURCE@)
@LINK@)";

constexpr const char* readme = R"(# @NAME@

An expr plugin, written by `expr new plugin @NAME@@FLAG@`. Build it against the
installed expr, then run its series:

```sh
cmake -S . -B build -DCMAKE_PREFIX_PATH=@PREFIX@ && cmake --build build
@EXPR@ run @NAME@.yaml
```
@NOTE@
- `@SOURCE@`: the plugin. `describe()` and `guesses()` run in expr's parent process; `setup()`
  prepares the inputs and nothing more, `run()` is the measured work, `verify()` checks the cold
  first call's output against a reference, `work()` counts FLOPs and bytes.
- `@NAME@.yaml`: the series, with two guesses: one the trace should confirm, one it should
  contradict, to show both.
- `CMakeLists.txt`: `find_package(expr)` and `expr_add_plugin()`, which builds `@NAME@.so` into
  `@PREFIX@/lib/expr/plugins`, where that expr finds it.

Writing plugins: `docs/writing-plugins.md` in expr's repository.
)";

struct Kind {
  std::string flag;  // "", " --torch", " --cuda"
  std::string extension;
  const char* source;
  const char* series;
  std::string project, find, link, note;
};

Kind kind_of(PluginKind kind) {
  switch (kind) {
    case PluginKind::torch:
      return {" --torch", ".cpp", torch_source, torch_series, "project(@NAME@ LANGUAGES CXX)",
              "# expr::torch: expr's LibTorch helpers, with the LibTorch expr was built with.\n"
              "find_package(expr REQUIRED COMPONENTS torch)",
              "target_link_libraries(@NAME@ PRIVATE expr::torch)\n",
              "\nWith a CUDA LibTorch, LibTorch's own CMake package enables CUDA: nvcc must be on `PATH` (or in\n"
              "`CUDACXX`). The series runs on a GPU where there is one, else on the CPU.\n"};
    case PluginKind::cuda:
      return {" --cuda", ".cu", cuda_source, cuda_series,
              "if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})\n"
              "  set(CMAKE_CUDA_ARCHITECTURES native)  # this machine's GPU; -DCMAKE_CUDA_ARCHITECTURES=90 builds for another\n"
              "endif()\n"
              "project(@NAME@ LANGUAGES CXX CUDA)",
              "find_package(CUDAToolkit REQUIRED)\nfind_package(expr REQUIRED)",
              "target_link_libraries(@NAME@ PRIVATE CUDA::cudart)\n",
              "\nThe kernel is compiled for this machine's GPU; on a machine without one, configure with\n"
              "`-DCMAKE_CUDA_ARCHITECTURES=90` (or your GPU's). The series needs a GPU to run.\n"};
    case PluginKind::cpu: break;
  }
  return {"", ".cpp", cpu_source, cpu_series, "project(@NAME@ LANGUAGES CXX)", "find_package(expr REQUIRED)", "", ""};
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

// my_plugin -> MyPlugin
std::string class_name(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out.empty() || std::isdigit(static_cast<unsigned char>(out.front())) ? "Plugin" + out : out;
}

// The running expr and its prefix (bin/expr -> the prefix); "installed" when the prefix holds the
// CMake package a plugin project finds.
struct Self {
  fs::path expr, prefix;
  bool installed = false;
};

Self self() {
  std::error_code ec;
  Self s;
  s.expr = fs::read_symlink("/proc/self/exe", ec);
  if (ec) s.expr = "expr";
  s.prefix = s.expr.parent_path().parent_path();
  s.installed = fs::exists(s.prefix / "lib" / "cmake" / "expr" / "exprConfig.cmake", ec);
  return s;
}

// Whether `name` can name a plugin: its file, its series and a C++ class are made from it.
bool valid_name(const std::string& name) {
  static const util::Regex identifier("[A-Za-z_][A-Za-z0-9_]{0,63}");
  return identifier.full_match(name).has_value();
}

// Writes every file, or none when one exists already or the directory cannot be made.
int write_files(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> existing;
  for (const auto& [file, _] : files)
    if (std::error_code ec; fs::exists(dir / file, ec)) existing.push_back((dir / file).string());
  if (!existing.empty()) {
    log::error("{} exist{} already; nothing was written (choose another name or --dir)", fmt::join(existing, ", "),
               existing.size() == 1 ? "s" : "");
    return bad_input;
  }
  try {
    fs::create_directories(dir);
    for (const auto& [file, text] : files) util::write_atomically(dir / file, text);
  } catch (const std::exception& e) {
    log::error("{}", e.what());
    return cannot_write;
  }
  for (const auto& [file, _] : files) fmt::print("wrote {}\n", (dir / file).string());
  return ok;
}

}  // namespace

int new_plugin(const std::string& name, PluginKind kind, const std::optional<fs::path>& dir_option) {
  if (!valid_name(name)) {
    log::error("'{}' cannot name a plugin: use letters, digits and _, not starting with a digit (at most 64)", name);
    return bad_input;
  }
  const auto k = kind_of(kind);
  const auto me = self();
  const auto dir = dir_option.value_or(fs::path(name));
  const auto source = name + k.extension;
  // A build tree's expr has no CMake package to build against: the files then name the prefix it
  // is to be installed to, as the note below says, so that the two give one piece of advice.
  const std::string suggested_prefix = "$HOME/expr";
  const auto prefix = me.installed ? me.prefix.string() : suggested_prefix;
  const auto program = me.installed ? me.expr.string() : suggested_prefix + "/bin/expr";
  const auto fill = [&](std::string text) {
    text = replace_all(std::move(text), "@PROJECT@", k.project);
    text = replace_all(std::move(text), "@FIND@", k.find);
    text = replace_all(std::move(text), "@LINK@", k.link);
    text = replace_all(std::move(text), "@NOTE@", k.note);
    text = replace_all(std::move(text), "@FLAG@", k.flag);
    text = replace_all(std::move(text), "@SOURCE@", source);
    text = replace_all(std::move(text), "@CLASS@", class_name(name));
    text = replace_all(std::move(text), "@PREFIX@", prefix);
    text = replace_all(std::move(text), "@EXPR@", program);
    return replace_all(std::move(text), "@NAME@", name);
  };
  const int status = write_files(dir, {{"CMakeLists.txt", fill(cmake_project)},
                                       {source, fill(k.source)},
                                       {name + ".yaml", fill(k.series)},
                                       {"README.md", fill(readme)}});
  if (status == ok && !me.installed)
    fmt::print(stderr,
               "note: this expr ({}) is not an installed one: its prefix has no lib/cmake/expr to build a plugin against. "
               "Install it first:\n  cmake --install {} --prefix {}\nthen {}/README.md builds and runs the plugin with that expr\n",
               me.expr.string(), shell_word(me.prefix.string()), suggested_prefix, dir.string());
  return status;
}

namespace {

// One line a parameter: its default as YAML, its documentation as a comment.
std::string param_lines(const std::vector<ParamSpec>& params) {
  std::string out;
  for (const auto& p : params) {
    auto value = series::to_string(p.default_value);
    if (p.type == ParamType::string) value = fmt::format("\"{}\"", value);
    auto doc = p.doc;
    if (!p.choices.empty()) doc += fmt::format(" (one of {})", fmt::join(p.choices, ", "));
    out += fmt::format("      {:<28}# {}\n", p.name + ": " + value, doc);
  }
  return out;
}

}  // namespace

int new_series(const std::string& name, const std::optional<std::string>& plugin_option, const std::optional<fs::path>& dir_option) {
  if (!valid_name(name)) {
    log::error("'{}' cannot name a series: use letters, digits and _, not starting with a digit (at most 64)", name);
    return bad_input;
  }
  // The plugin: the one asked for, else one called like the series, else the first one found.
  loader::PluginCatalog catalog(loader::search_path({}, loader::Origin::option));
  const auto found = catalog.available();
  std::string plugin = plugin_option.value_or(found.count(name) || found.empty() ? name : found.begin()->first);
  std::string params = "      # its parameters: `expr list` shows them\n";
  if (plugin_option || found.count(plugin)) {
    try {
      params = param_lines(catalog.find(plugin)->description().params);
    } catch (const loader::LoadError& e) {
      log::error("{}", e.what());
      return bad_input;
    }
  }
  std::vector<std::string> names;
  for (const auto& [n, _] : found) names.push_back(n);
  const auto text = fmt::format(R"(# {name}: experiments, and what you expect their traces to show. Check it, then run it:
#   expr validate {name}.yaml
#   expr run {name}.yaml
# Guesses (under expect:) are written in expr's expectation language: docs/expectations.md in
# expr's repository, and `expr metrics` lists what they can ask about.
series: {name}
description: >
  What this series asks, in a sentence or two.
# plugin_path: [plugins]          # more directories with plugins, relative to this file
defaults:
  device: auto                    # auto (cuda where there is a GPU, else cpu), cpu or cuda
  iterations: {{warmup: 2, traced: 3, min_samples: 10, min_time: 0.05s, max_time: 1s}}
  timeout: 60s                    # a hung experiment fails after this; more than twice max_time
  # memory: 8GiB                  # the host memory an experiment's worker may use
  # expect: [rel_error < 1e-2]    # guesses checked for every experiment
experiments:
  - name: first                   # an identifier: other experiments' guesses write first.host_time
    # the plugins found here: {found} (`expr list` shows their parameters)
    plugin: {plugin}
    params:                       # the plugin's parameters, at their defaults
{params}    # axes:                       # a sweep: one experiment per value (docs/series-files.md, "Sweeps")
    #   n: pow2(1024, 1048576)
    expect:
      - check: first_call > host_time
        why: the reason, shown next to the verdict; here, the first call pays for what later calls find ready
        # required: true          # contradicted or not evaluable: `expr run` exits with 1
)",
                                fmt::arg("name", name), fmt::arg("plugin", plugin), fmt::arg("params", params),
                                fmt::arg("found", names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
  return write_files(dir_option.value_or(fs::path(".")), {{name + ".yaml", text}});
}

}  // namespace expr::cli
