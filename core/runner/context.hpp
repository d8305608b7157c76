// The Context a plugin sees inside a worker: ranges go to the host recorder, facts and correctness
// figures to the measurement, log lines to the parent.
#pragma once

#include <expr/plugin.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "outcome/measurement.hpp"
#include "trace/recorder.hpp"

namespace expr::runner {

class WorkerContext final : public Context {
 public:
  using LogSink = std::function<void(LogLevel, std::string_view)>;

  WorkerContext(Device device, int device_index, trace::HostRecorder& recorder, outcome::Measurement& measurement, LogSink log)
      : device_(device), device_index_(device_index), recorder_(recorder), measurement_(measurement), log_(std::move(log)) {}

  Device device() const override { return device_; }
  int device_index() const override { return device_index_; }
  void log(LogLevel level, std::string_view message) override { log_(level, message); }
  bool tracing() const override { return recorder_.recording(); }
  RangeHandle begin_range(std::string_view name, RangeKind kind) override;
  void end_range(RangeHandle handle) override { recorder_.end(handle); }
  void report_correctness(std::string_view what, double relative_error, double tolerance) override;
  void report_fact(std::string_view key, std::string_view value) override;
  void note_environment(std::string_view key, std::string_view value) override;
  void add_trace_hook(std::unique_ptr<TraceHook> hook) override { hooks_.push_back(std::move(hook)); }

  // Around the traced iterations.
  void start_hooks();
  void stop_hooks();
  bool has_hooks() const { return !hooks_.empty(); }

 private:
  Device device_;
  int device_index_;
  trace::HostRecorder& recorder_;
  outcome::Measurement& measurement_;
  LogSink log_;
  std::vector<std::unique_ptr<TraceHook>> hooks_;
};

}  // namespace expr::runner
