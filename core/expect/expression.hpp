// The tree of one guess, `observed OP guessed [tolerance]`. Each kind of node defines in one place
// (expression.cpp) both its type rule, checked before anything runs, and its evaluation against
// a measurement, so the two cannot drift apart. syntax.hpp builds the tree; check.hpp binds it to
// a series and judges it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analysis/metrics.hpp"
#include "outcome/measurement.hpp"

namespace expr::expect {

// Bounds on one guess, so that hostile input gets an error instead of exhausting the stack:
// parsing, binding, evaluating and destroying the tree recurse as deep as it nests, and std::regex
// compiles and matches recursively. The longest guess in this repository is about 100 bytes.
inline constexpr std::size_t max_guess_length = 1000;  // bytes
inline constexpr int max_nesting = 64;                 // parentheses, signs and operators, one level each
inline constexpr std::size_t max_regex_length = 256;   // bytes
inline constexpr int max_regex_nesting = 16;           // groups within groups

// A problem in one guess: what is wrong, at bytes [offset, end) of its text.
class SyntaxError : public std::runtime_error {
 public:
  SyntaxError(std::size_t offset, std::size_t end, const std::string& message)
      : std::runtime_error(message), offset_(offset), end_(end) {}
  SyntaxError(std::size_t offset, const std::string& message) : SyntaxError(offset, offset + 1, message) {}
  std::size_t offset() const { return offset_; }
  std::size_t end() const { return end_; }

 private:
  std::size_t offset_, end_;
};

// What a node yields, known before anything runs.
struct Type {
  enum class Kind { number, text, dynamic } kind = Kind::number;  // dynamic: a fact, typed once read
  analysis::Unit unit;                                            // of a number
};

// What a guess reads besides its own experiment's warm measurement, found while binding.
struct Reads {
  std::vector<std::string> experiments;  // other experiments, by the names the guess gives them
  bool cold_call = false;                // its own experiment's cold first call (cold.metric)
};

// What names may refer to while binding, and what the guess was found to read.
struct Scope {
  const std::vector<std::string>& experiments;  // of the series
  Reads& reads;
};

// Finds another experiment's measurement by name; null when the run has no such experiment.
using FindMeasurement = std::function<const outcome::Measurement*(const std::string& experiment)>;

// One side of a guess being evaluated: what it read, and why it has no value when it has none.
struct Evaluation {
  Evaluation(std::string_view text, const outcome::Measurement& self, const FindMeasurement& find)
      : text(text), self(self), find(find) {}

  std::string_view text;  // the whole guess, to quote what was written
  const outcome::Measurement& self;
  const FindMeasurement& find;
  std::vector<std::string> evidence;  // one line per metric read
  std::vector<std::string> caveats;
  std::string unavailable;  // why there is no value
  bool absent = false;      // a selector matched nothing: the trace contradicts the guess
};

class Node {
 public:
  virtual ~Node() = default;
  // The type rule: resolves names, checks the operands and says what the node yields. Throws
  // SyntaxError at the offending text.
  virtual Type bind(Scope& scope) = 0;
  // The value for one experiment, or none: `ev` then says why.
  virtual std::optional<analysis::Value> evaluate(Evaluation& ev) const = 0;
  std::string_view written(std::string_view text) const { return text.substr(begin, end - begin); }

  std::size_t begin = 0, end = 0;  // bytes of the guess's text it was written as
  int height = 0;                  // levels of nodes below it
};
using NodePtr = std::unique_ptr<Node>;

// `5`, `1.5ms`, `13%`, `"text"`
class Literal final : public Node {
 public:
  explicit Literal(analysis::Value value) : value(std::move(value)) {}
  Type bind(Scope& scope) override;
  std::optional<analysis::Value> evaluate(Evaluation& ev) const override;
  analysis::Value value;
};

struct Argument {
  std::optional<std::string> name;  // absent for the positional one
  std::string value;
  std::size_t name_offset = 0;      // where the name was written
  std::size_t offset = 0, end = 0;  // where the value was written
};

// `[experiment.]metric[(args)][.field]` or `cold.metric[(args)][.field]`, as written until bound.
class Reference final : public Node {
 public:
  struct Segment {
    std::string name;
    std::size_t offset = 0;
    std::optional<std::vector<Argument>> args;
  };
  explicit Reference(std::vector<Segment> segments) : segments(std::move(segments)) {}
  Type bind(Scope& scope) override;
  std::optional<analysis::Value> evaluate(Evaluation& ev) const override;

  std::vector<Segment> segments;
  // Filled by bind():
  std::string experiment;  // empty: the experiment the guess belongs to
  analysis::MetricCall call;  // call.cold: read over that experiment's cold first call
};

// `lhs op rhs`, op one of + - * /
class Arithmetic final : public Node {
 public:
  Arithmetic(char op, NodePtr lhs, NodePtr rhs);
  Type bind(Scope& scope) override;
  std::optional<analysis::Value> evaluate(Evaluation& ev) const override;

  char op;
  NodePtr lhs, rhs;
};

// `-operand`
class Negation final : public Node {
 public:
  explicit Negation(NodePtr operand);
  Type bind(Scope& scope) override;
  std::optional<analysis::Value> evaluate(Evaluation& ev) const override;

  NodePtr operand;
};

enum class Comparison { equal, not_equal, less, less_equal, greater, greater_equal, approx };
std::string_view to_string(Comparison c);

struct Tolerance {
  enum class Kind { absolute, relative } kind;
  analysis::Quantity amount;  // relative: a fraction of the guessed value
  std::size_t offset = 0, end = 0;
};

// Why a guess cannot be judged.
struct NotEvaluable {
  std::string reason;
};

// A guess compiled: its text and its tree, the comparison at the root. Its type rule (bind) checks
// that the sides compare and compiles a `~ "regex"`; its evaluation (decide) compares the two values.
struct GuessTree {
  std::string text;
  NodePtr observed;
  Comparison comparison = Comparison::equal;
  NodePtr guessed;
  std::optional<Tolerance> tolerance;

  // Filled by bind():
  std::optional<std::regex> pattern;  // of `~ "regex"`
  Reads reads;

  // Binds both sides to the metrics and to `series_experiments`; throws SyntaxError.
  void bind(const std::vector<std::string>& series_experiments);
  // Whether `observed OP guessed [tolerance]` holds, or why it cannot be judged.
  std::variant<bool, NotEvaluable> decide(const analysis::Value& observed_value, const analysis::Value& guessed_value) const;
};

}  // namespace expr::expect
