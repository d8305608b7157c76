// The outputs of a run, as sinks. Each hears the run begin, each experiment start and progress,
// each experiment finish (with every guess judged that can be by then), and the run end.
// `expr run` and `expr replay` feed the same Multiplex; a new output (a history database, an HTML
// report) is one more sink.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "outcome/placement.hpp"
#include "report/run_result.hpp"

namespace expr::report {

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void begin(const RunResult&) {}
  virtual void started(const std::string& /*experiment*/, const outcome::Placement&) {}
  virtual void progress(const std::string& /*experiment*/, std::string_view /*phase*/, std::string_view /*detail*/) {}
  // `experiment` is in `run`; guesses of earlier experiments may have been judged since.
  virtual void finished(const RunResult& /*run*/, const ExperimentResult& /*experiment*/) {}
  virtual void end(const RunResult&) {}
};

// Hands every event to each of its sinks, in the order they were added.
class Multiplex final : public Sink {
 public:
  void add(std::unique_ptr<Sink> sink) { sinks_.push_back(std::move(sink)); }

  void begin(const RunResult& run) override;
  void started(const std::string& experiment, const outcome::Placement& placement) override;
  void progress(const std::string& experiment, std::string_view phase, std::string_view detail) override;
  void finished(const RunResult& run, const ExperimentResult& experiment) override;
  void end(const RunResult& run) override;

 private:
  std::vector<std::unique_ptr<Sink>> sinks_;
};

}  // namespace expr::report
