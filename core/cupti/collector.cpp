// cupti::Collector: ActivityApi's buffers into the Decoder, and the decoded records into the trace
// at stop().
#include "cupti/collector.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "cupti/activity_api.hpp"
#include "cupti/decoder.hpp"
#include "cupti/log.hpp"
#include "trace/clock.hpp"

namespace expr::cupti {

std::string api_version() {
  std::uint32_t version = 0;
  return cuptiGetVersion(&version) == CUPTI_SUCCESS ? std::to_string(version) : "";
}

namespace {

// CUPTI stamps every record with this clock (host-side records when they happen, device-side ones
// when it converts GPU time), so device records line up with the host ranges of the trace.
std::uint64_t CUPTIAPI trace_clock() { return static_cast<std::uint64_t>(trace::now()); }

void require_device() {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) throw std::runtime_error("no CUDA driver");
  int devices = 0;
  if (const auto e = cudaGetDeviceCount(&devices); e != cudaSuccess)
    throw std::runtime_error(fmt::format("no CUDA device: {}: {}", cudaGetErrorName(e), cudaGetErrorString(e)));
  if (devices == 0) throw std::runtime_error("no CUDA device");
}

}  // namespace

Collector::Collector(trace::Trace& trace)
    : trace_(trace),
      decoder_(std::make_unique<Decoder>()),
      api_(std::make_unique<ActivityApi>([this](const CompletedBuffer& buffer) { decode(buffer); })) {}

// If stop() was not called (the run failed), api_ goes first and lets CUPTI go; the records decoded
// so far are discarded with decoder_.
Collector::~Collector() = default;

bool Collector::start() {
  if (api_->enabled()) return true;
  if (!api_->claim()) return unavailable("another CUPTI collector is already active in this process");
  try {
    require_device();
    api_->enable(&trace_clock);
  } catch (const std::exception& e) {
    api_->release();
    return unavailable(e.what());
  }
  prime();
  return true;
}

bool Collector::unavailable(std::string reason) {
  trace_.collection.device_traced = false;
  trace_.collection.device_unavailable = std::move(reason);
  return false;
}

void Collector::decode(const CompletedBuffer& buffer) {
  std::lock_guard lock(mutex_);
  decoder_->add(buffer);
}

// CUPTI sets itself up when it records its first API call: 4.4 ms on the H200, which showed up
// inside the first traced iteration. One recorded call here pays for it; its records are dropped.
void Collector::prime() {
  (void)cudaDeviceSynchronize();
  api_->flush();
  std::lock_guard lock(mutex_);
  decoder_->discard_records();
}

void Collector::stop() {
  if (!api_->enabled()) return;
  // Device records are complete only once their work is: wait for it before the last flush.
  if (const auto e = cudaDeviceSynchronize(); e != cudaSuccess)
    warn(
        "cudaDeviceSynchronize before the final flush failed ({}: {}); records of unfinished work "
        "may be missing",
        cudaGetErrorName(e), cudaGetErrorString(e));
  api_->flush();
  api_->release();  // disables collection, then flushes what other threads recorded since
  merge();
  trace_.collection.driver_memory_traced = api_->records_memory();
}

void Collector::merge() {
  auto decoded = std::make_unique<Decoder>();
  {
    std::lock_guard lock(mutex_);
    decoded.swap(decoder_);
  }
  std::move(*decoded).merge_into(trace_);
}

}  // namespace expr::cupti
