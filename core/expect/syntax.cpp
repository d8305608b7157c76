// The parser of the expectation language (syntax.hpp): a lexer, then recursive descent, bounded in
// length and nesting so that no guess exhausts the stack.
#include "expect/syntax.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <map>

namespace expr::expect {

using analysis::Display;
using analysis::Quantity;

namespace {

enum class Tok { end, number, identifier, string, symbol };

struct Token {
  Tok kind = Tok::end;
  std::string text;  // identifier, string contents, or symbol
  double number = 0;
  std::size_t begin = 0, end = 0;
};

// Units a number may carry, and what they multiply it by.
const std::map<std::string, Quantity, std::less<>>& units() {
  static const std::map<std::string, Quantity, std::less<>> table{
      {"ns", {1, analysis::duration, Display::duration}},      {"us", {1e3, analysis::duration, Display::duration}},
      {"µs", {1e3, analysis::duration, Display::duration}},    {"ms", {1e6, analysis::duration, Display::duration}},
      {"s", {1e9, analysis::duration, Display::duration}},     {"B", {1, analysis::data, Display::bytes}},
      {"KB", {1e3, analysis::data, Display::bytes}},           {"MB", {1e6, analysis::data, Display::bytes}},
      {"GB", {1e9, analysis::data, Display::bytes}},           {"KiB", {1024.0, analysis::data, Display::bytes}},
      {"MiB", {1048576.0, analysis::data, Display::bytes}},    {"GiB", {1073741824.0, analysis::data, Display::bytes}},
  };
  return table;
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    Token t;
    t.begin = pos_;
    if (pos_ >= text_.size()) {
      t.end = pos_;
      return t;
    }
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) return number(t);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return identifier(t);
    if (c == '"' || c == '\'') return string(t, c);
    return symbol(t);
  }

 private:
  Token number(Token& t) {
    const char* first = text_.data() + pos_;
    const auto [ptr, ec] = std::from_chars(first, text_.data() + text_.size(), t.number);
    if (ec == std::errc::result_out_of_range)
      throw SyntaxError(pos_, pos_ + static_cast<std::size_t>(ptr - first), "number out of range");
    if (ec != std::errc()) throw SyntaxError(pos_, "malformed number");
    pos_ += static_cast<std::size_t>(ptr - first);
    t.kind = Tok::number;
    t.end = pos_;
    return t;
  }

  Token identifier(Token& t) {
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    t.kind = Tok::identifier;
    t.text = std::string(text_.substr(t.begin, pos_ - t.begin));
    t.end = pos_;
    return t;
  }

  // Only the quote itself is escaped (\" or \'), so regexes keep their backslashes: "sm\d+".
  Token string(Token& t, char quote) {
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == quote) ++pos_;
      t.text += text_[pos_++];
    }
    if (pos_ >= text_.size()) throw SyntaxError(t.begin, "string not closed: add the closing " + std::string(1, quote));
    ++pos_;
    t.kind = Tok::string;
    t.end = pos_;
    return t;
  }

  Token symbol(Token& t) {
    static constexpr std::string_view two[] = {"==", "!=", "<=", ">=", "+-", "\xC2\xB1" /* ± */, "\xC2\xB5" /* µ */};
    for (auto s : two)
      if (text_.substr(pos_, s.size()) == s) {
        if (s == "\xC2\xB5") return identifier_from_micro(t);
        pos_ += s.size();
        t.kind = Tok::symbol;
        t.text = s == "+-" ? "\xC2\xB1" : std::string(s);
        t.end = pos_;
        return t;
      }
    const char c = text_[pos_];
    if (std::string_view("<>~+-*/(),.=%").find(c) == std::string_view::npos)
      throw SyntaxError(pos_, std::string("unexpected character '") + c + "'" +
                                  (std::string_view("^$[]\\|?{}").find(c) != std::string_view::npos
                                       ? "; a regex is a quoted string, as in ranges(\"^sum$\") or ~ \"gemm|conv\""
                                       : ""));
    ++pos_;
    t.kind = Tok::symbol;
    t.text = std::string(1, c);
    t.end = pos_;
    return t;
  }

  // "µs" starts with a two-byte character the identifier rule does not accept.
  Token identifier_from_micro(Token& t) {
    pos_ += 2;
    Token rest = identifier(t);
    rest.text = "\xC2\xB5" + std::string(text_.substr(t.begin + 2, pos_ - t.begin - 2));
    return rest;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), lexer_(text) {}

  GuessTree parse() {
    bound_length(text_);
    advance();
    GuessTree c;
    c.text = std::string(text_);
    if (at_end()) throw SyntaxError(0, "empty guess: write `observed OP guessed`, e.g. `kernels == 5`");
    c.observed = sum();
    c.comparison = comparison();
    c.guessed = sum();
    c.tolerance = tolerance();
    if (c.comparison == Comparison::approx && !c.tolerance && !is_text_literal(*c.guessed))
      throw SyntaxError(c.guessed->end, "`~` needs a tolerance: add `± 3`, `± 2%` (for a percentage) or `within 10%`");
    if (c.tolerance && c.comparison != Comparison::approx)
      throw SyntaxError(c.tolerance->offset, c.tolerance->end,
                        "a tolerance only goes with `~`; write `~` instead of `" + std::string(to_string(c.comparison)) + "`");
    if (!at_end()) throw SyntaxError(tok_.begin, tok_.end, "unexpected '" + token_text() + "' after the guess");
    return c;
  }

 private:
  // Counts the parentheses and signs being parsed, each a level of recursion.
  class Nested {
   public:
    explicit Nested(Parser& p) : p_(p) {
      if (++p_.open_ > max_nesting) throw p_.too_deep(p_.tok_.begin, p_.tok_.end);
    }
    ~Nested() { --p_.open_; }

   private:
    Parser& p_;
  };

  SyntaxError too_deep(std::size_t begin, std::size_t end) const {
    return SyntaxError(begin, end,
                       fmt::format("the guess nests more than {} levels deep (each parenthesis, sign and operator is one)", max_nesting));
  }

  static bool is_text_literal(const Node& n) {
    const auto* l = dynamic_cast<const Literal*>(&n);
    return l && std::holds_alternative<std::string>(l->value);
  }

  bool at_end() const { return tok_.kind == Tok::end; }
  bool is_symbol(std::string_view s) const { return tok_.kind == Tok::symbol && tok_.text == s; }
  std::string token_text() const { return std::string(text_.substr(tok_.begin, tok_.end - tok_.begin)); }
  void advance() { tok_ = lexer_.next(); }

  void expect_symbol(std::string_view s, const std::string& context) {
    if (!is_symbol(s))
      throw SyntaxError(tok_.begin, tok_.end, "expected '" + std::string(s) + "' " + context +
                                                  (at_end() ? ", found the end" : ", found '" + token_text() + "'"));
    advance();
  }

  Comparison comparison() {
    static const std::map<std::string, Comparison, std::less<>> ops{
        {"==", Comparison::equal},        {"!=", Comparison::not_equal}, {"<", Comparison::less},
        {"<=", Comparison::less_equal},   {">", Comparison::greater},    {">=", Comparison::greater_equal},
        {"~", Comparison::approx}};
    if (tok_.kind == Tok::symbol)
      if (auto it = ops.find(tok_.text); it != ops.end()) {
        advance();
        return it->second;
      }
    if (tok_.kind == Tok::symbol && tok_.text == "=")
      throw SyntaxError(tok_.begin, tok_.end, "'=' is not a comparison; write '=='");
    throw SyntaxError(tok_.begin, tok_.end, std::string("expected a comparison (==, !=, <, <=, >, >=, ~)") +
                                                (at_end() ? " after the observed value" : ", found '" + token_text() + "'"));
  }

  std::optional<Tolerance> tolerance() {
    if (is_symbol("\xC2\xB1")) {
      const auto offset = tok_.begin;
      advance();
      const auto amount = quantity_literal("after ±");
      return Tolerance{Tolerance::Kind::absolute, amount, offset, last_end_};
    }
    if (tok_.kind == Tok::identifier && tok_.text == "within") {
      const auto offset = tok_.begin;
      advance();
      const auto amount = quantity_literal("after `within`");
      if (amount.display != Display::percent) throw SyntaxError(offset, last_end_, "`within` takes a percentage, e.g. `within 10%`");
      return Tolerance{Tolerance::Kind::relative, amount, offset, last_end_};
    }
    return std::nullopt;
  }

  Quantity quantity_literal(const char* context) {
    if (tok_.kind != Tok::number) throw SyntaxError(tok_.begin, tok_.end, std::string("expected a number ") + context);
    auto node = primary();
    return std::get<Quantity>(dynamic_cast<const Literal&>(*node).value);
  }

  // A node written from `begin` to the last token read.
  template <class N, class... Parts>
  NodePtr make(std::size_t begin, Parts&&... parts) {
    NodePtr n = std::make_unique<N>(std::forward<Parts>(parts)...);
    n->begin = begin;
    n->end = last_end_;
    return n;
  }

  // An operator's or a sign's node, refused where it makes the tree deeper than max_nesting, with
  // the error at the operator or sign, [op_begin, op_end).
  NodePtr bounded(NodePtr n, std::size_t op_begin, std::size_t op_end) const {
    if (n->height > max_nesting) throw too_deep(op_begin, op_end);
    return n;
  }

  NodePtr sum() {
    auto lhs = product();
    while (is_symbol("+") || is_symbol("-")) {
      const char op = tok_.text[0];
      const auto begin = lhs->begin, op_begin = tok_.begin, op_end = tok_.end;
      advance();
      auto rhs = product();
      lhs = bounded(make<Arithmetic>(begin, op, std::move(lhs), std::move(rhs)), op_begin, op_end);
    }
    return lhs;
  }

  NodePtr product() {
    auto lhs = unary();
    while (is_symbol("*") || is_symbol("/")) {
      const char op = tok_.text[0];
      const auto begin = lhs->begin, op_begin = tok_.begin, op_end = tok_.end;
      advance();
      auto rhs = unary();
      lhs = bounded(make<Arithmetic>(begin, op, std::move(lhs), std::move(rhs)), op_begin, op_end);
    }
    return lhs;
  }

  NodePtr unary() {
    if (is_symbol("-")) {
      const Nested sign(*this);
      const auto begin = tok_.begin, end = tok_.end;
      advance();
      auto operand = unary();
      return bounded(make<Negation>(begin, std::move(operand)), begin, end);
    }
    return primary();
  }

  NodePtr primary() {
    const auto begin = tok_.begin;
    if (tok_.kind == Tok::number) {
      Quantity q{tok_.number, analysis::dimensionless, Display::number};
      last_end_ = tok_.end;
      advance();
      if (is_symbol("%")) {
        q = {q.value / 100, analysis::dimensionless, Display::percent};
        last_end_ = tok_.end;
        advance();
      } else if (tok_.kind == Tok::identifier) {
        if (auto it = units().find(tok_.text); it != units().end()) {
          q = {q.value * it->second.value, it->second.dim, it->second.display};
          last_end_ = tok_.end;
          advance();
        } else if (tok_.text != "within") {
          throw SyntaxError(tok_.begin, tok_.end,
                            "unknown unit '" + tok_.text + "'; units are ns, us, µs, ms, s, B, KB, MB, GB, KiB, MiB, GiB and %");
        }
      }
      return make<Literal>(begin, q);
    }
    if (tok_.kind == Tok::string) {
      std::string s = tok_.text;
      last_end_ = tok_.end;
      advance();
      return make<Literal>(begin, std::move(s));
    }
    if (is_symbol("(")) {
      const Nested parenthesis(*this);
      advance();
      auto inner = sum();
      if (!is_symbol(")")) expect_symbol(")", "to close '('");
      last_end_ = tok_.end;
      advance();
      inner->begin = begin;
      inner->end = last_end_;
      return inner;
    }
    if (tok_.kind == Tok::identifier) return reference();
    if (at_end()) throw SyntaxError(tok_.begin, "expected a value (a number, a \"string\" or a metric), found the end");
    throw SyntaxError(tok_.begin, tok_.end, "expected a value (a number, a \"string\" or a metric), found '" + token_text() + "'");
  }

  NodePtr reference() {
    const auto begin = tok_.begin;
    std::vector<Reference::Segment> segments;
    while (true) {
      if (tok_.kind != Tok::identifier) throw SyntaxError(tok_.begin, tok_.end, "expected a name after '.'");
      Reference::Segment seg{tok_.text, tok_.begin, std::nullopt};
      last_end_ = tok_.end;
      advance();
      if (is_symbol("(")) seg.args = arguments();
      segments.push_back(std::move(seg));
      if (!is_symbol(".")) break;
      advance();
    }
    return make<Reference>(begin, std::move(segments));
  }

  // The value of an argument: a "string", a bare word or a number.
  bool at_argument_value() const { return tok_.kind == Tok::string || tok_.kind == Tok::identifier || tok_.kind == Tok::number; }
  void take_argument_value(Argument& a) {
    a.offset = tok_.begin;
    a.end = tok_.end;
    a.value = tok_.kind == Tok::string ? tok_.text : token_text();
    advance();
  }

  std::vector<Argument> arguments() {
    advance();  // (
    std::vector<Argument> args;
    while (!is_symbol(")")) {
      Argument a;
      if (tok_.kind == Tok::identifier) {
        const auto word = tok_;
        take_argument_value(a);  // a bare word, e.g. copies(DtoD), unless a value follows '='
        if (is_symbol("=")) {
          advance();
          a.name = word.text;
          a.name_offset = word.begin;
          if (!at_argument_value()) throw SyntaxError(tok_.begin, tok_.end, "expected a value after '" + word.text + "='");
          take_argument_value(a);
        }
      } else if (at_argument_value()) {
        take_argument_value(a);
      } else {
        throw SyntaxError(tok_.begin, tok_.end,
                          at_end() ? "argument list not closed: add ')'" : "expected an argument, found '" + token_text() + "'");
      }
      args.push_back(std::move(a));
      if (is_symbol(",")) {
        advance();
        continue;
      }
      if (!is_symbol(")"))
        throw SyntaxError(tok_.begin, tok_.end,
                          at_end() ? "argument list not closed: add ')'" : "expected ',' or ')', found '" + token_text() + "'");
    }
    last_end_ = tok_.end;
    advance();  // )
    return args;
  }

  std::string_view text_;
  Lexer lexer_;
  Token tok_;
  std::size_t last_end_ = 0;
  int open_ = 0;  // parentheses and signs being parsed
};

}  // namespace

GuessTree parse(std::string_view text) { return Parser(text).parse(); }

void bound_length(std::string_view text) {
  if (text.size() > max_guess_length)
    throw SyntaxError(max_guess_length, text.size(), fmt::format("this guess is {} bytes long; the limit is {}", text.size(), max_guess_length));
}

}  // namespace expr::expect
