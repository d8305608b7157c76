// The native trace file written and read: see trace_file.hpp.
#include "trace/trace_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "util/atomic_file.hpp"

namespace expr::trace {

namespace {

using json = nlohmann::json;

// A trace file may come from anywhere (`expr replay` reads what it is given), so every number is
// checked to be a whole number that fits where it goes: nlohmann's conversion of a float or of an
// out-of-range number to an integer type is undefined behaviour.
template <class T>
T whole(const json& v, std::string_view what) {
  if (v.is_number_unsigned()) {
    if (const auto u = v.get<std::uint64_t>(); std::in_range<T>(u)) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    if (const auto i = v.get<std::int64_t>(); std::in_range<T>(i)) return static_cast<T>(i);
  }
  throw std::runtime_error(fmt::format("{}: {} is not a whole number in the range of its field", what, v.dump()));
}

// A time stored relative to the epoch, back on the trace's clock: never before the epoch (the
// writer stores offsets from the earliest record) and never past the clock's range.
Ns absolute(std::int64_t relative, Ns epoch) {
  if (relative < 0 || relative > std::numeric_limits<Ns>::max() - epoch)
    throw std::runtime_error(fmt::format("time {} ns after the epoch is out of range", relative));
  return relative + epoch;
}

// Every column is an integer; timestamps are stored relative to the trace's earliest one.
template <class Record>
struct Column {
  const char* name;
  std::function<std::int64_t(const Record&, Ns epoch)> get;
  std::function<void(Record&, std::int64_t, Ns epoch)> set;
};

// Owner may be a base of Record (DeviceSpan for Kernel), so Record is always named explicitly.
template <class Record, class Owner, class Member>
Column<Record> plain(const char* name, Member Owner::*member) {
  return {name, [member](const Record& r, Ns) { return static_cast<std::int64_t>(r.*member); },
          [member](Record& r, std::int64_t v, Ns) { r.*member = static_cast<Member>(v); }};
}

template <class Record, class Owner>
Column<Record> time(const char* name, Ns Owner::*member) {
  return {name, [member](const Record& r, Ns epoch) { return r.*member - epoch; },
          [member](Record& r, std::int64_t v, Ns epoch) { r.*member = absolute(v, epoch); }};
}

template <class Record, class Member>
Column<Record> footprint(const char* name, Member Footprint::*member) {
  return {name, [member](const Record& r, Ns) { return static_cast<std::int64_t>(r.footprint.*member); },
          [member](Record& r, std::int64_t v, Ns) { r.footprint.*member = static_cast<Member>(v); }};
}

template <class Record>
Column<Record> dim(const char* name, Dim3 Footprint::*member, std::uint32_t Dim3::*axis) {
  return {name, [=](const Record& r, Ns) { return static_cast<std::int64_t>(r.footprint.*member.*axis); },
          [=](Record& r, std::int64_t v, Ns) { r.footprint.*member.*axis = static_cast<std::uint32_t>(v); }};
}

template <class Span>
std::vector<Column<Span>> span_columns() {
  return {plain<Span>("name", &DeviceSpan::name),   plain<Span>("device", &DeviceSpan::device),
          plain<Span>("stream", &DeviceSpan::stream), time<Span>("start", &DeviceSpan::start),
          time<Span>("end", &DeviceSpan::end),        plain<Span>("correlation", &DeviceSpan::correlation)};
}

template <class Record>
std::vector<Column<Record>> columns();

template <>
std::vector<Column<HostRange>> columns() {
  return {plain<HostRange>("name", &HostRange::name),           plain<HostRange>("kind", &HostRange::kind),
          plain<HostRange>("thread", &HostRange::thread),       time<HostRange>("start", &HostRange::start),
          time<HostRange>("end", &HostRange::end),              plain<HostRange>("parent", &HostRange::parent),
          plain<HostRange>("iteration", &HostRange::iteration)};
}

template <>
std::vector<Column<ApiCall>> columns() {
  return {plain<ApiCall>("name", &ApiCall::name),          plain<ApiCall>("api", &ApiCall::api),
          plain<ApiCall>("thread", &ApiCall::thread),      time<ApiCall>("start", &ApiCall::start),
          time<ApiCall>("end", &ApiCall::end),             plain<ApiCall>("correlation", &ApiCall::correlation),
          plain<ApiCall>("cbid", &ApiCall::cbid)};
}

template <>
std::vector<Column<Kernel>> columns() {
  auto c = span_columns<Kernel>();
  c.push_back(plain<Kernel>("mangled", &Kernel::mangled));
  for (auto [x, y, z, member] : {std::tuple{"grid_x", "grid_y", "grid_z", &Footprint::grid},
                                 std::tuple{"block_x", "block_y", "block_z", &Footprint::block},
                                 std::tuple{"cluster_x", "cluster_y", "cluster_z", &Footprint::cluster}}) {
    c.push_back(dim<Kernel>(x, member, &Dim3::x));
    c.push_back(dim<Kernel>(y, member, &Dim3::y));
    c.push_back(dim<Kernel>(z, member, &Dim3::z));
  }
  c.push_back(footprint<Kernel>("registers_per_thread", &Footprint::registers_per_thread));
  c.push_back(footprint<Kernel>("static_shared", &Footprint::static_shared));
  c.push_back(footprint<Kernel>("dynamic_shared", &Footprint::dynamic_shared));
  c.push_back(footprint<Kernel>("local_per_thread", &Footprint::local_per_thread));
  c.push_back(footprint<Kernel>("shared_executed", &Footprint::shared_executed));
  return c;
}

template <>
std::vector<Column<Copy>> columns() {
  auto c = span_columns<Copy>();
  c.push_back(plain<Copy>("kind", &Copy::kind));
  c.push_back(plain<Copy>("bytes", &Copy::bytes));
  return c;
}

template <>
std::vector<Column<Memset>> columns() {
  auto c = span_columns<Memset>();
  c.push_back(plain<Memset>("bytes", &Memset::bytes));
  c.push_back(plain<Memset>("value", &Memset::value));
  return c;
}

template <>
std::vector<Column<Synchronization>> columns() {
  return {plain<Synchronization>("name", &Synchronization::name),     plain<Synchronization>("thread", &Synchronization::thread),
          plain<Synchronization>("stream", &Synchronization::stream), time<Synchronization>("start", &Synchronization::start),
          time<Synchronization>("end", &Synchronization::end),        plain<Synchronization>("correlation", &Synchronization::correlation)};
}

template <>
std::vector<Column<MemoryEvent>> columns() {
  return {plain<MemoryEvent>("source", &MemoryEvent::source),
          plain<MemoryEvent>("device", &MemoryEvent::device),
          plain<MemoryEvent>("thread", &MemoryEvent::thread),
          time<MemoryEvent>("time", &MemoryEvent::time),
          plain<MemoryEvent>("bytes", &MemoryEvent::bytes),
          plain<MemoryEvent>("address", &MemoryEvent::address),
          plain<MemoryEvent>("total_allocated", &MemoryEvent::total_allocated),
          plain<MemoryEvent>("total_reserved", &MemoryEvent::total_reserved),
          plain<MemoryEvent>("correlation", &MemoryEvent::correlation),
          plain<MemoryEvent>("iteration", &MemoryEvent::iteration)};
}

template <class Record>
void write_table(fmt::memory_buffer& out, const char* key, const std::vector<Record>& records, Ns epoch) {
  const auto cols = columns<Record>();
  fmt::format_to(std::back_inserter(out), ",\n\"{}\":{{\"columns\":[", key);
  for (std::size_t i = 0; i < cols.size(); ++i) fmt::format_to(std::back_inserter(out), "{}\"{}\"", i ? "," : "", cols[i].name);
  fmt::format_to(std::back_inserter(out), "],\"rows\":[");
  for (std::size_t r = 0; r < records.size(); ++r) {
    fmt::format_to(std::back_inserter(out), "{}\n[", r ? "," : "");
    for (std::size_t i = 0; i < cols.size(); ++i)
      fmt::format_to(std::back_inserter(out), "{}{}", i ? "," : "", cols[i].get(records[r], epoch));
    out.push_back(']');
  }
  fmt::format_to(std::back_inserter(out), "]}}");
}

template <class Record>
void read_table(const json& doc, const char* key, std::vector<Record>& records, Ns epoch) {
  if (!doc.contains(key)) return;
  const auto cols = columns<Record>();
  const auto& table = doc.at(key);
  // Map the file's columns onto ours by name, so a file with extra or reordered columns still loads.
  std::vector<const Column<Record>*> order;
  for (const auto& name : table.at("columns")) {
    const Column<Record>* found = nullptr;
    for (const auto& c : cols)
      if (name.get<std::string>() == c.name) found = &c;
    order.push_back(found);
  }
  for (const auto& row : table.at("rows")) {
    Record r{};
    for (std::size_t i = 0; i < order.size() && i < row.size(); ++i)
      if (order[i]) order[i]->set(r, whole<std::int64_t>(row[i], key), epoch);
    records.push_back(r);
  }
}

json device_json(const DeviceProperties& d) {
  return {{"id", d.id},
          {"name", d.name},
          {"compute_capability", {d.major, d.minor}},
          {"multiprocessors", d.multiprocessors},
          {"warp_size", d.warp_size},
          {"global_memory", d.global_memory},
          {"max_threads_per_block", d.max_threads_per_block},
          {"shared_per_block", d.shared_per_block},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"max_blocks_per_sm", d.max_blocks_per_sm},
          {"registers_per_sm", d.registers_per_sm},
          {"max_registers_per_block", d.max_registers_per_block},
          {"shared_per_sm", d.shared_per_sm},
          {"shared_per_block_optin", d.shared_per_block_optin},
          {"reserved_shared_per_block", d.reserved_shared_per_block}};
}

DeviceProperties device_from(const json& j) {
  // The occupancy calculator divides by these: each must be positive (the shared memory sizes at
  // least not negative).
  const auto positive = [&](const char* key, bool zero_too = false) {
    const auto v = whole<int>(j.at(key), key);
    if (v < 0 || (v == 0 && !zero_too)) throw std::runtime_error(fmt::format("device {}: {} must be positive", j.at("id").dump(), key));
    return v;
  };
  DeviceProperties d;
  d.id = whole<std::uint32_t>(j.at("id"), "device id");
  d.name = j.at("name");
  d.major = whole<int>(j.at("compute_capability").at(0), "compute_capability");
  d.minor = whole<int>(j.at("compute_capability").at(1), "compute_capability");
  d.multiprocessors = positive("multiprocessors");
  d.warp_size = positive("warp_size");
  // Kept since traces give them to the PyTorch profiler's readers; older traces lack them.
  d.global_memory = j.value("global_memory", std::uint64_t{0});
  d.max_threads_per_block = j.value("max_threads_per_block", 0);
  d.shared_per_block = j.value("shared_per_block", 0);
  d.max_threads_per_sm = positive("max_threads_per_sm");
  d.max_blocks_per_sm = positive("max_blocks_per_sm");
  d.registers_per_sm = positive("registers_per_sm");
  d.max_registers_per_block = positive("max_registers_per_block");
  d.shared_per_sm = positive("shared_per_sm", true);
  d.shared_per_block_optin = positive("shared_per_block_optin", true);
  d.reserved_shared_per_block = positive("reserved_shared_per_block", true);
  return d;
}

// Every reference inside the trace points inside it: names into the string table, a range's
// parent to a range opened before it (so following parents ends), iterations to their range.
void check_references(const Trace& t) {
  const auto fail = [](const char* table, std::size_t row, const std::string& what) {
    throw std::runtime_error(fmt::format("{} row {}: {}", table, row + 1, what));
  };
  const auto name = [&](const char* table, std::size_t row, StringId id) {
    if (id >= t.strings.size()) fail(table, row, fmt::format("string {} is not in the string table", id));
  };
  const auto index = [&](const char* table, std::size_t row, const char* field, std::int32_t i, std::size_t end) {
    if (i != none && (i < 0 || static_cast<std::size_t>(i) >= end)) fail(table, row, fmt::format("{} {} does not exist", field, i));
  };
  for (std::size_t i = 0; i < t.iterations.size(); ++i) index("iterations", i, "range", t.iterations[i].range, t.ranges.size());
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    name("ranges", i, t.ranges[i].name);
    if (const auto parent = t.ranges[i].parent; parent != none && (parent < 0 || static_cast<std::size_t>(parent) >= i))
      fail("ranges", i, fmt::format("parent {} is not a range opened before it", parent));
    index("ranges", i, "iteration", t.ranges[i].iteration, t.iterations.size());
  }
  for (std::size_t i = 0; i < t.api_calls.size(); ++i) name("api_calls", i, t.api_calls[i].name);
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    name("kernels", i, t.kernels[i].name);
    name("kernels", i, t.kernels[i].mangled);
  }
  for (std::size_t i = 0; i < t.copies.size(); ++i) name("copies", i, t.copies[i].name);
  for (std::size_t i = 0; i < t.memsets.size(); ++i) name("memsets", i, t.memsets[i].name);
  for (std::size_t i = 0; i < t.syncs.size(); ++i) name("syncs", i, t.syncs[i].name);
  for (std::size_t i = 0; i < t.memory.size(); ++i) {
    if (t.memory[i].source != MemorySource::allocator && t.memory[i].source != MemorySource::driver)
      fail("memory", i, fmt::format("source {} is neither allocator (0) nor driver (1)", static_cast<int>(t.memory[i].source)));
    index("memory", i, "iteration", t.memory[i].iteration, t.iterations.size());
  }
}

// The counters phase's outcome, and each measured kernel's values as [kernel row, value...].
json counters_json(const Trace& t) {
  const auto& c = t.counters;
  json values = json::array();
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    if (t.kernels[i].counters.empty()) continue;
    json row{i};
    for (const double v : t.kernels[i].counters) row.push_back(v);
    values.push_back(std::move(row));
  }
  return {{"state", to_string(c.state)}, {"reason", c.reason},   {"metrics", c.metrics}, {"iteration", c.iteration},
          {"replay", to_string(c.replay)}, {"passes", c.passes},          {"ranges", c.ranges},   {"wall_ns", c.wall},    {"values", std::move(values)}};
}

void read_counters(const json& j, Trace& t) {
  auto& c = t.counters;
  const auto state = counter_state_from(j.at("state").get<std::string>());
  if (!state) throw std::runtime_error(fmt::format("counters: unknown state {}", j.at("state").dump()));
  c.state = *state;
  c.reason = j.at("reason");
  c.metrics = j.at("metrics").get<std::vector<std::string>>();
  c.iteration = whole<std::int32_t>(j.at("iteration"), "counters iteration");
  // Traces written before there was a choice were all taken with kernel replay.
  if (const auto r = j.find("replay"); r != j.end()) {
    const auto replay = r->is_string() ? counter_replay_from(r->get<std::string>()) : std::nullopt;
    if (!replay) throw std::runtime_error(fmt::format("counters: unknown replay {}", r->dump()));
    c.replay = *replay;
  }
  c.passes = whole<std::uint32_t>(j.at("passes"), "counters passes");
  c.ranges = whole<std::uint32_t>(j.at("ranges"), "counters ranges");
  c.wall = whole<Ns>(j.at("wall_ns"), "counters wall_ns");
  if (c.iteration != none && (c.iteration < 0 || static_cast<std::size_t>(c.iteration) >= t.iterations.size()))
    throw std::runtime_error(fmt::format("counters: iteration {} does not exist", c.iteration));
  for (const auto& row : j.at("values")) {
    const auto kernel = whole<std::size_t>(row.at(0), "counters kernel");
    if (kernel >= t.kernels.size()) throw std::runtime_error(fmt::format("counters: kernel row {} does not exist", kernel + 1));
    if (row.size() != c.metrics.size() + 1)
      throw std::runtime_error(fmt::format("counters: kernel row {} holds {} values for {} metrics", kernel + 1, row.size() - 1,
                                           c.metrics.size()));
    auto& values = t.kernels[kernel].counters;
    values.clear();
    // null: a value CUPTI could not evaluate (JSON has no NaN).
    for (std::size_t i = 1; i < row.size(); ++i) {
      if (row[i].is_null()) values.push_back(std::numeric_limits<double>::quiet_NaN());
      else if (row[i].is_number()) values.push_back(row[i].get<double>());
      else throw std::runtime_error(fmt::format("counters: kernel row {}: {} is not a number", kernel + 1, row[i].dump()));
    }
  }
}

}  // namespace

void save(const Trace& trace, const std::filesystem::path& file) {
  const Ns epoch = trace.earliest();
  json head{{"format", trace_format},
            {"process", trace.process},
            {"epoch_ns", epoch},
            {"collection",
             {{"device_traced", trace.collection.device_traced},
              {"device_unavailable", trace.collection.device_unavailable},
              {"ops_traced", trace.collection.ops_traced},
              {"allocator_traced", trace.collection.allocator_traced},
              {"driver_memory_traced", trace.collection.driver_memory_traced},
              {"dropped_records", trace.collection.dropped_records}}},
            {"devices", json::array()},
            {"strings", trace.strings.all()},
            {"iterations", json::array()}};
  if (trace.unix_offset != 0) head["unix_offset_ns"] = trace.unix_offset;
  if (trace.distributed) head["distributed"] = {{"rank", trace.distributed->rank}, {"world_size", trace.distributed->world_size}};
  for (const auto& d : trace.devices) head["devices"].push_back(device_json(d));
  head["counters"] = counters_json(trace);
  for (const auto& it : trace.iterations) head["iterations"].push_back({it.range, it.start - epoch, it.end - epoch});

  fmt::memory_buffer out;
  auto text = head.dump(-1, ' ', false, json::error_handler_t::replace);  // a range name that is not UTF-8 loses no trace
  out.append(text.data(), text.data() + text.size() - 1);  // reopen the object for the tables
  write_table(out, "ranges", trace.ranges, epoch);
  write_table(out, "api_calls", trace.api_calls, epoch);
  write_table(out, "kernels", trace.kernels, epoch);
  write_table(out, "copies", trace.copies, epoch);
  write_table(out, "memsets", trace.memsets, epoch);
  write_table(out, "syncs", trace.syncs, epoch);
  write_table(out, "memory", trace.memory, epoch);
  out.append(std::string_view("}\n"));
  util::write_atomically(file, std::string_view(out.data(), out.size()));
}

Trace load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open trace file", file.string()));
  Trace t;
  try {
    const json doc = json::parse(in);
    if (doc.value("format", "") != trace_format)
      throw std::runtime_error(fmt::format("not an {} file (format: {})", trace_format, doc.value("format", "none")));
    const auto epoch = whole<Ns>(doc.at("epoch_ns"), "epoch_ns");
    if (epoch < 0) throw std::runtime_error("epoch_ns is negative");
    t.process = doc.contains("process") ? whole<std::uint32_t>(doc.at("process"), "process") : 0;
    t.unix_offset = doc.value("unix_offset_ns", Ns{0});
    if (const auto it = doc.find("distributed"); it != doc.end()) t.distributed = Distributed{it->at("rank"), it->at("world_size")};
    const auto& c = doc.at("collection");
    t.collection.device_traced = c.at("device_traced");
    t.collection.device_unavailable = c.at("device_unavailable");
    t.collection.ops_traced = c.at("ops_traced");
    // Traces recorded before expr traced memory have neither.
    t.collection.allocator_traced = c.value("allocator_traced", false);
    t.collection.driver_memory_traced = c.value("driver_memory_traced", false);
    t.collection.dropped_records = whole<std::uint64_t>(c.at("dropped_records"), "dropped_records");
    for (const auto& d : doc.at("devices")) t.devices.push_back(device_from(d));
    for (const auto& s : doc.at("strings"))
      if (t.strings.intern(s.get<std::string>()) + 1 != t.strings.size())
        throw std::runtime_error("string table repeats an entry");
    for (const auto& it : doc.at("iterations"))
      t.iterations.push_back({whole<std::int32_t>(it.at(0), "iterations"), absolute(whole<Ns>(it.at(1), "iterations"), epoch),
                              absolute(whole<Ns>(it.at(2), "iterations"), epoch)});
    read_table(doc, "ranges", t.ranges, epoch);
    read_table(doc, "api_calls", t.api_calls, epoch);
    read_table(doc, "kernels", t.kernels, epoch);
    read_table(doc, "copies", t.copies, epoch);
    read_table(doc, "memsets", t.memsets, epoch);
    read_table(doc, "syncs", t.syncs, epoch);
    read_table(doc, "memory", t.memory, epoch);
    // Traces recorded before the counters phase existed have none: State::not_taken.
    if (doc.contains("counters")) read_counters(doc.at("counters"), t);
    check_references(t);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: malformed trace file: {}", file.string(), e.what()));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("{}: {}", file.string(), e.what()));
  }
  link(t);
  return t;
}

}  // namespace expr::trace
