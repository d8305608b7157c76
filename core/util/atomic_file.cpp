// Atomic replacement of a file: write a temporary beside it, flush it to the disk, rename it over
// the file, flush the directory. And durable appends to a journal.
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace expr::util {

namespace {

[[noreturn]] void fail(const std::filesystem::path& file, const char* what, int error) {
  throw std::runtime_error(file.string() + ": cannot " + what + ": " + std::strerror(error));
}

// Writes all of `contents` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, std::string_view contents) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const auto n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

int write_and_sync(int fd, std::string_view contents) {
  const int error = write_all(fd, contents);
  return error != 0 ? error : ::fsync(fd) == 0 ? 0 : errno;
}

// A new or renamed entry is only durable once its directory is: without this, a power loss could
// bring back the old file (or none) although the new one was complete. (EINVAL: a file system that
// cannot sync a directory; nothing more can be done there.)
void sync_directory_of(const std::filesystem::path& file) {
  const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) fail(file, "flush the directory of", errno);
  const int error = ::fsync(dir_fd) == 0 || errno == EINVAL ? 0 : errno;
  ::close(dir_fd);
  if (error != 0) fail(file, "flush the directory of", error);
}

}  // namespace

void write_atomically(const std::filesystem::path& file, std::string_view contents) {
  write_atomically(file, [&](const WritePiece& write) { write(contents); });
}

void write_atomically(const std::filesystem::path& file, const std::function<void(const WritePiece&)>& produce) {
  const auto temp = file.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(file, "write", errno);
  // Pieces are gathered into blocks of about 1 MiB: one write() per piece would cost a system
  // call each for the many small ones.
  std::string block;
  int error = 0;
  const auto flush = [&] {
    if (error == 0) error = write_all(fd, block);
    block.clear();
  };
  try {
    produce([&](std::string_view piece) {
      block += piece;
      if (block.size() >= (1u << 20)) flush();
    });
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  flush();
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    fail(file, "write", error);
  }
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    error = errno;
    ::unlink(temp.c_str());
    fail(file, "replace", error);
  }
  sync_directory_of(file);
}

void append_durably(const std::filesystem::path& file, std::string_view record) {
  bool created = true;
  int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  }
  if (fd < 0) fail(file, "append to", errno);
  int error = write_and_sync(fd, record);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) fail(file, "append to", error);
  if (created) sync_directory_of(file);
}

}  // namespace expr::util
