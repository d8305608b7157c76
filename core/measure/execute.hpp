// Running a series into its run directory: the runner's events handed to the outputs
// (report/sinks.hpp) and the history as each experiment ends, Ctrl-C and SIGTERM turned into an
// interrupted run. What `expr run` (new or resumed), each run of `expr calibrate` and the second
// measurement of inconclusive experiments share.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "history/compare.hpp"
#include "history/store.hpp"
#include "measure/workers.hpp"
#include "report/assembler.hpp"
#include "report/run_directory.hpp"
#include "runner/series_runner.hpp"
#include "session/loaded_series.hpp"

namespace expr::measure {

// What one execution of a series adds to running it: what `expr run`, each run of `expr
// calibrate` and the second measurement of inconclusive experiments differ in.
struct Execution {
  history::Store* store = nullptr;  // record the run here
  history::Noise noise;             // each point's calibrated run-to-run noise, carried by its timings
  bool terminal_report = true;
  Workers workers;                  // --gpus
};
struct Executed {
  report::RunResult run;
  std::string history_error;  // the history stopped recording this run, and why
  int signal = 0;             // the first signal that interrupted the run; 0 when none did
};

// The environment a run starts with: the host's and the devices'.
std::map<std::string, std::string> starting_environment(const runner::DeviceProbe& probe);

// The series file as it is run, and plan.json: what a resumed run repeats and is checked against.
// Throws std::runtime_error.
void record_request(const report::RunDirectory& dir, const report::RunRequest& request, const series::Plan& plan);

// Runs every point of the loaded plan that `run` has no result for yet (`restored` are those an
// earlier attempt finished), the outputs hearing of each as it ends; Ctrl-C or SIGTERM stop it,
// and what did not finish is recorded as interrupted. The caller holds the run directory's lock.
// Throws std::runtime_error when the run directory cannot be written.
Executed execute(session::LoadedSeries& loaded, report::RunResult run, const report::RunDirectory& dir, const report::RunRequest& request,
                 std::vector<report::FinishedExperiment> restored, const runner::DeviceProbe& probe, const Execution& how);

// A new run of `loaded`, from `series_file` as the user named it, into `dir`: the directory
// created and locked (refused when it holds an earlier run, unless `force`: session::Stop), the
// request recorded, then execute(). Throws std::runtime_error when the directory cannot be written.
Executed execute_new(session::LoadedSeries& loaded, const std::filesystem::path& series_file, const report::RunDirectory& dir,
                     const report::RunRequest& request, bool force, const runner::DeviceProbe& probe, const Execution& how);

}  // namespace expr::measure
