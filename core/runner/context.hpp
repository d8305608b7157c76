// The Context a plugin sees inside a worker: ranges and allocations go to the host recorder, facts and correctness
// figures to the measurement, log lines to the worker's logger (util/log.hpp) and so to the parent.
// It also enforces that correctness comes only from verify() (expr/plugin.hpp: setup must not run
// the measured work).
#pragma once

#include <expr/plugin.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "outcome/measurement.hpp"
#include "trace/recorder.hpp"
#include "util/log.hpp"

namespace expr::runner {

// A plugin's log level (expr/plugin.hpp) as the logger's.
log::Level log_level(LogLevel level);

class WorkerContext final : public Context {
 public:
  using LogSink = std::function<void(LogLevel, std::string_view)>;

  WorkerContext(Device device, int device_index, std::string shared_directory, trace::HostRecorder& recorder, outcome::Measurement& measurement,
                LogSink log)
      : device_(device), device_index_(device_index), shared_directory_(std::move(shared_directory)), recorder_(recorder),
        measurement_(measurement), log_(std::move(log)) {}

  Device device() const override { return device_; }
  int device_index() const override { return device_index_; }
  std::string shared_directory() const override { return shared_directory_; }
  void log(LogLevel level, std::string_view message) override { log_(level, message); }
  bool tracing() const override { return recorder_.recording(); }
  RangeHandle begin_range(std::string_view name, RangeKind kind) override;
  void end_range(RangeHandle handle) override { recorder_.end(handle); }
  void report_correctness(std::string_view what, double relative_error, double tolerance) override;
  void report_fact(std::string_view key, std::string_view value) override;
  void note_environment(std::string_view key, std::string_view value) override;
  void add_trace_hook(std::unique_ptr<TraceHook> hook) override { hooks_.push_back(std::move(hook)); }
  void record_allocation(std::uint64_t address, std::int64_t bytes, std::int64_t total_allocated, std::int64_t total_reserved,
                         int device) override {
    recorder_.allocation(address, bytes, total_allocated, total_reserved, device);
  }

  // The plugin hook the runner is about to call ("setup()", "run()", "verify()", "teardown()"),
  // for the error when a hook does what only another may.
  void entering(std::string_view plugin_hook) { plugin_hook_ = plugin_hook; }
  // The first thing the plugin did that the API refuses, or empty. Recorded rather than thrown, so
  // a plugin that catches everything cannot hide it; the runner fails the phase on it.
  const std::string& violation() const { return violation_; }

  // Around the traced iterations.
  void start_hooks();
  void stop_hooks();
  // Whether a hook records this (TraceHook::records).
  bool traces(TraceHook::Records what) const;

  // As setup() returns: hooks stop watching it. Then what they saw there, by name.
  void setup_done();
  std::vector<std::string> seen_in_setup() const;

 private:
  Device device_;
  int device_index_;
  std::string shared_directory_;
  trace::HostRecorder& recorder_;
  outcome::Measurement& measurement_;
  LogSink log_;
  std::vector<std::unique_ptr<TraceHook>> hooks_;
  std::string_view plugin_hook_ = "setup()";
  std::string violation_;
};

}  // namespace expr::runner
