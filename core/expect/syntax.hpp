// The expectation language: one guess per line, `observed OP guessed [tolerance]`.
//
//   kernels == 5
//   copies(kind=DtoD) == 0
//   kernel("flash_fwd").occupancy ~ 13% ± 2%
//   gpu_time / naive_inplace.gpu_time ~ 3.7 within 25%
//   kernel("cudnn").launch_api == "cuLaunchKernelEx"
//
// docs/expectations.md is the reference. This file only turns text into a tree; check.hpp binds
// names to metrics and experiments and evaluates.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analysis/metrics.hpp"

namespace expr::expect {

// A problem in one expectation, at a byte offset into its text.
class SyntaxError : public std::runtime_error {
 public:
  SyntaxError(std::size_t offset, const std::string& message) : std::runtime_error(message), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

struct Literal {
  analysis::Value value;
};

struct Argument {
  std::optional<std::string> name;  // absent for the positional one
  std::string value;
  std::size_t offset = 0;
};

// `[experiment.]metric[(args)][.field]`, as written; check.hpp resolves it.
struct Reference {
  struct Segment {
    std::string name;
    std::size_t offset = 0;
    std::optional<std::vector<Argument>> args;
  };
  std::vector<Segment> segments;

  // Filled by bind().
  std::string experiment;  // empty: the experiment the check belongs to
  analysis::MetricCall call;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Arithmetic {
  char op;  // + - * /
  NodePtr lhs, rhs;
};

struct Negation {
  NodePtr operand;
};

struct Node {
  std::variant<Literal, Reference, Arithmetic, Negation> expr;
  std::size_t begin = 0, end = 0;  // byte offsets of its text
};

enum class Comparison { equal, not_equal, less, less_equal, greater, greater_equal, approx };
std::string_view to_string(Comparison c);

struct Tolerance {
  enum class Kind { absolute, relative } kind;
  analysis::Quantity amount;  // relative: a fraction of the guessed value
  std::size_t offset = 0;
};

struct Check {
  std::string text;
  NodePtr observed;
  Comparison comparison = Comparison::equal;
  NodePtr guessed;
  std::optional<Tolerance> tolerance;
};

Check parse(std::string_view text);

}  // namespace expr::expect
