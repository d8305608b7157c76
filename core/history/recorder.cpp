// Recording a run in the history as it goes.
#include "history/recorder.hpp"

#include <fmt/format.h>

namespace expr::history {

template <class Write>
void Recorder::attempt(Write write) {
  if (!error_.empty()) return;
  try {
    write();
  } catch (const std::exception& e) {
    error_ = e.what();
    fmt::print(stderr, "error: the history stops recording this run: {}\n", error_);
  }
}

void Recorder::begin(const report::RunResult& run) {
  attempt([&] {
    store_.begin_run(snapshot(run, gates_));
    // A resumed run begins with the experiments its earlier attempt finished.
    for (const auto& e : run.experiments) store_.record_experiment(run.id, snapshot(e));
  });
}

void Recorder::finished(const report::RunResult& run, const report::ExperimentResult& e) {
  attempt([&] { store_.record_experiment(run.id, snapshot(e)); });
}

void Recorder::end(const report::RunResult& run) {
  attempt([&] {
    RunRecord record;
    record.id = run.id;
    record.finished = run.finished;
    record.environment = run.environment;
    record.tally = report::tally(run);
    record.verdicts = verdicts(run);
    store_.finish_run(record);
  });
}

}  // namespace expr::history
