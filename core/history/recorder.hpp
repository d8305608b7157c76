// The history as one more output of a run (report/sink.hpp): the run's row when it begins, each
// experiment as it finishes, the verdicts and tally when it ends. A failure to write is reported
// once and ends the recording, never the run: results.json has everything, and `expr run` exits
// with 4 at the end.
#pragma once

#include <string>

#include "history/store.hpp"
#include "report/sink.hpp"

namespace expr::history {

class Recorder final : public report::Sink {
 public:
  Recorder(Store& store, series::Gates gates) : store_(store), gates_(std::move(gates)) {}

  void begin(const report::RunResult& run) override;
  void finished(const report::RunResult& run, const report::ExperimentResult& experiment) override;
  void end(const report::RunResult& run) override;

  const std::string& error() const { return error_; }  // empty while every write succeeded

 private:
  template <class Write>
  void attempt(Write write);

  Store& store_;
  series::Gates gates_;
  std::string error_;
};

}  // namespace expr::history
