// The readers under test take file names: each input is written to a file of a scratch folder
// in /dev/shm (memory, so an execution costs no disk), removed when the fuzzer exits.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace expr::fuzz {

inline const std::filesystem::path& scratch_dir() {
  static const auto dir = [] {
    const std::filesystem::path shm("/dev/shm");
    auto d = (std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path()) /
             ("expr-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return d;
  }();
  return dir;
}

// Writes the input to scratch_dir()/name and returns its path.
inline std::filesystem::path scratch_file(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const auto file = scratch_dir() / name;
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

}  // namespace expr::fuzz
