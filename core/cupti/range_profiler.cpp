// RangeProfiler: CUPTI's profiler host API builds the configuration for the metrics on the host,
// the range profiler collects them on the device, the host API evaluates each range's values.
#include "cupti/range_profiler.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <utility>

#include "cupti/log.hpp"

namespace expr::cupti {

namespace {

// CUPTI's parameter structs zeroed, with the size of the version this code was built against.
template <class Params>
Params params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

std::string describe(CUptiResult result) {
  const char* name = nullptr;
  const char* message = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || !name) name = "unknown CUPTI result";
  if (cuptiGetErrorMessage(result, &message) != CUPTI_SUCCESS || !message) message = "";
  return *message ? fmt::format("{} ({})", name, message) : std::string(name);
}

// Notes the call and its result in the logs; a failure throws CountersUnavailable naming both.
void call(const char* function, CUptiResult result) {
  note("counters: {}: {}", function, describe(result));
  if (result != CUPTI_SUCCESS) throw CountersUnavailable(fmt::format("{} failed: {}", function, describe(result)));
}

// A call made while letting go, which must not throw: a failure is a warning.
void call_quietly(const char* function, CUptiResult result) noexcept {
  if (result == CUPTI_SUCCESS)
    note("counters: {}: {}", function, describe(result));
  else
    warn("counters: {}: {}", function, describe(result));
}

const char* support(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    default: return "unknown";
  }
}

// Why the device cannot be profiled, when it cannot: which of CUPTI's conditions fails.
void require_supported_device(int device) {
  auto p = params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  call("cuptiProfilerDeviceSupported", cuptiProfilerDeviceSupported(&p));
  const auto summary = fmt::format("architecture {}, SLI {}, vGPU {}, confidential compute {}, CMP {}, WSL {}", support(p.architecture),
                                   support(p.sli), support(p.vGpu), support(p.confidentialCompute), support(p.cmp), support(p.wsl));
  note("counters: device {}: {}", device, summary);
  if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    throw CountersUnavailable(fmt::format("CUPTI cannot profile device {}: {}", device, summary));
}

// The current context, through the runtime's driver entry point: expr does not link libcuda, which
// machines without a driver lack.
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &found) != cudaSuccess || !function ||
      found != cudaDriverEntryPointSuccess)
    throw CountersUnavailable("the CUDA driver does not provide cuCtxGetCurrent");
  CUcontext context = nullptr;
  if (reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS || !context)
    throw CountersUnavailable("no current CUDA context to profile");
  return context;
}

std::vector<const char*> pointers(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  for (const auto& n : names) out.push_back(n.c_str());
  return out;
}

}  // namespace

struct RangeProfiler::Session {
  bool profiler_initialized = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::vector<std::uint8_t> config;
  std::vector<std::uint8_t> counter_data;
  bool started = false;

  // The constructor's steps, in order.
  void initialize();
  void configure(const std::string& chip, const std::vector<std::uint8_t>& availability, const std::vector<const char*>& names);
  std::uint32_t passes();
  void enable(CUcontext context, const std::vector<const char*>& names, std::size_t max_ranges, trace::CounterReplay replay);

  ~Session() {
    if (started) {
      auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = profiler;
      call_quietly("cuptiRangeProfilerStop", cuptiRangeProfilerStop(&p));
    }
    if (profiler) {
      auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = profiler;
      call_quietly("cuptiRangeProfilerDisable", cuptiRangeProfilerDisable(&p));
    }
    if (host) {
      auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = host;
      call_quietly("cuptiProfilerHostDeinitialize", cuptiProfilerHostDeinitialize(&p));
    }
    if (profiler_initialized) {
      auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      call_quietly("cuptiProfilerDeInitialize", cuptiProfilerDeInitialize(&p));
    }
  }
};

namespace {

std::string chip_name(int device) {
  auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = static_cast<std::size_t>(device);
  call("cuptiDeviceGetChipName", cuptiDeviceGetChipName(&chip));
  return chip.pChipName;
}

// Which counters this device and driver expose to this process.
std::vector<std::uint8_t> ask_counter_availability(CUcontext context) {
  std::vector<std::uint8_t> availability;
  auto p = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  p.ctx = context;
  call("cuptiProfilerGetCounterAvailability (size)", cuptiProfilerGetCounterAvailability(&p));
  availability.resize(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = availability.data();
  call("cuptiProfilerGetCounterAvailability", cuptiProfilerGetCounterAvailability(&p));
  return availability;
}

}  // namespace

void RangeProfiler::Session::initialize() {
  auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  call("cuptiProfilerInitialize", cuptiProfilerInitialize(&p));
  profiler_initialized = true;
}

// The configuration image for `names` on this chip, made on the host.
void RangeProfiler::Session::configure(const std::string& chip, const std::vector<std::uint8_t>& availability, const std::vector<const char*>& names) {
  {
    auto p = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.data();
    call("cuptiProfilerHostInitialize", cuptiProfilerHostInitialize(&p));
    host = p.pHostObject;
  }
  // One metric at a time, so a name the device does not have is named in the error.
  for (const auto* name : names) {
    auto p = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    p.pHostObject = host;
    p.ppMetricNames = &name;
    p.numMetrics = 1;
    try {
      call("cuptiProfilerHostConfigAddMetrics", cuptiProfilerHostConfigAddMetrics(&p));
    } catch (const CountersUnavailable& e) {
      throw CountersUnavailable(fmt::format("metric {} is not available on {}: {}", name, chip, e.what()));
    }
  }
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host;
  call("cuptiProfilerHostGetConfigImageSize", cuptiProfilerHostGetConfigImageSize(&size));
  config.resize(size.configImageSize);
  auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = host;
  image.configImageSize = config.size();
  image.pConfigImage = config.data();
  call("cuptiProfilerHostGetConfigImage", cuptiProfilerHostGetConfigImage(&image));
}

std::uint32_t RangeProfiler::Session::passes() {
  auto p = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  call("cuptiProfilerHostGetNumOfPasses", cuptiProfilerHostGetNumOfPasses(&p));
  return static_cast<std::uint32_t>(p.numOfPasses);
}

// The range profiler on `context`, with room for `max_ranges` kernel launches' counters.
void RangeProfiler::Session::enable(CUcontext context, const std::vector<const char*>& names, std::size_t max_ranges,
                                    trace::CounterReplay replay) {
  {
    auto p = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = context;
    call("cuptiRangeProfilerEnable", cuptiRangeProfilerEnable(&p));
    profiler = p.pRangeProfilerObject;
  }
  {
    auto p = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler;
    p.pMetricNames = const_cast<const char**>(names.data());
    p.numMetrics = names.size();
    p.maxNumOfRanges = max_ranges;
    p.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
    call("cuptiRangeProfilerGetCounterDataSize", cuptiRangeProfilerGetCounterDataSize(&p));
    counter_data.resize(p.counterDataSize);
  }
  {
    auto p = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler;
    p.counterDataSize = counter_data.size();
    p.pCounterData = counter_data.data();
    call("cuptiRangeProfilerCounterDataImageInitialize", cuptiRangeProfilerCounterDataImageInitialize(&p));
  }
  auto p = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = profiler;
  p.configSize = config.size();
  p.pConfig = config.data();
  p.counterDataImageSize = counter_data.size();
  p.pCounterDataImage = counter_data.data();
  p.range = CUPTI_AutoRange;
  p.replayMode = replay == trace::CounterReplay::kernel ? CUPTI_KernelReplay : CUPTI_UserReplay;
  p.maxRangesPerPass = max_ranges;
  p.numNestingLevels = 1;
  p.minNestingLevel = 1;
  p.passIndex = 0;
  p.targetNestingLevel = 1;
  call("cuptiRangeProfilerSetConfig", cuptiRangeProfilerSetConfig(&p));
}

RangeProfiler::RangeProfiler(int device, std::vector<std::string> metrics, std::size_t max_ranges, trace::CounterReplay replay,
                             std::vector<std::uint8_t> availability)
    : session_(std::make_unique<Session>()), metrics_(std::move(metrics)), availability_(std::move(availability)), replay_(replay) {
  auto& s = *session_;
  const auto names = pointers(metrics_);
  s.initialize();
  require_supported_device(device);
  const auto context = current_context();
  const auto chip = chip_name(device);
  note("counters: chip {}, metrics {}", chip, fmt::join(metrics_, ", "));
  if (availability_.empty())
    availability_ = ask_counter_availability(context);
  else
    note("counters: counter availability as another process of the run found it ({} bytes)", availability_.size());
  s.configure(chip, availability_, names);
  passes_ = s.passes();
  note("counters: {} replay passes, {} replay", passes_, trace::to_string(replay_));
  s.enable(context, names, max_ranges, replay_);
}

RangeProfiler::~RangeProfiler() = default;

CounterProfile RangeProfiler::profile(const std::function<void()>& work) {
  auto& s = *session_;
  CounterProfile out;
  out.passes = passes_;
  // Kernel replay takes every pass inside the one run of `work`; iteration replay one pass a run,
  // and CUPTI says after each whether it has them all.
  const std::uint32_t runs = replay_ == trace::CounterReplay::kernel ? 1 : passes_;
  for (std::uint32_t run = 1;; ++run) {
    {
      auto p = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = s.profiler;
      call("cuptiRangeProfilerStart", cuptiRangeProfilerStart(&p));
      s.started = true;
    }
    work();
    auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = s.profiler;
    s.started = false;
    call("cuptiRangeProfilerStop", cuptiRangeProfilerStop(&p));
    note("counters: run {} of the work, all passes submitted: {}", run, p.isAllPassSubmitted ? "yes" : "no");
    if (p.isAllPassSubmitted) break;
    if (run >= runs)
      throw CountersUnavailable(fmt::format("cuptiRangeProfilerStop: {} replay passes were needed, and {} run{} of the work did not submit them all",
                                            passes_, run, run == 1 ? "" : "s"));
  }
  {
    auto p = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = s.profiler;
    call("cuptiRangeProfilerDecodeData", cuptiRangeProfilerDecodeData(&p));
    out.dropped_ranges = p.numOfRangeDropped;
    if (p.numOfRangeDropped) warn("counters: {} ranges dropped", p.numOfRangeDropped);
  }
  std::size_t ranges = 0;
  {
    auto p = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    p.pCounterDataImage = s.counter_data.data();
    p.counterDataImageSize = s.counter_data.size();
    call("cuptiRangeProfilerGetCounterDataInfo", cuptiRangeProfilerGetCounterDataInfo(&p));
    ranges = p.numTotalRanges;
    note("counters: {} ranges decoded", ranges);
  }
  auto names = pointers(metrics_);
  for (std::size_t i = 0; i < ranges; ++i) {
    trace::CounterRange range;
    {
      auto p = params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
      p.pCounterDataImage = s.counter_data.data();
      p.counterDataImageSize = s.counter_data.size();
      p.rangeIndex = i;
      p.rangeDelimiter = "/";
      const auto result = cuptiRangeProfilerCounterDataGetRangeInfo(&p);
      if (result != CUPTI_SUCCESS || i == 0) call("cuptiRangeProfilerCounterDataGetRangeInfo", result);  // logged once, or on failure
      range.name = p.rangeName ? p.rangeName : "";
    }
    range.values.assign(names.size(), std::nan(""));
    auto p = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    p.pHostObject = s.host;
    p.pCounterDataImage = s.counter_data.data();
    p.counterDataImageSize = s.counter_data.size();
    p.rangeIndex = i;
    p.ppMetricNames = names.data();
    p.numMetrics = names.size();
    p.pMetricValues = range.values.data();
    const auto result = cuptiProfilerHostEvaluateToGpuValues(&p);
    if (result != CUPTI_SUCCESS || i == 0) call("cuptiProfilerHostEvaluateToGpuValues", result);
    if (i == 0) note("counters: range '{}': {}", range.name, fmt::join(range.values, ", "));
    out.ranges.push_back(std::move(range));
  }
  return out;
}

}  // namespace expr::cupti
