#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace expr::util {

namespace {
[[noreturn]] void fail(const std::filesystem::path& file, const char* what) {
  throw std::runtime_error(file.string() + ": cannot " + what + ": " + std::strerror(errno));
}
}  // namespace

void write_atomically(const std::filesystem::path& file, std::string_view contents) {
  const auto temp = file.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(file, "write");
  std::size_t done = 0;
  while (done < contents.size()) {
    const auto n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      ::unlink(temp.c_str());
      fail(file, "write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temp.c_str());
    fail(file, "write");
  }
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    ::unlink(temp.c_str());
    fail(file, "replace");
  }
  // The rename is in the directory: synced too, the new file survives a power loss or a reboot,
  // not only the end of this process. (EINVAL: a file system that cannot sync a directory.)
  const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) fail(dir, "open");
  const bool synced = ::fsync(dir_fd) == 0 || errno == EINVAL;
  ::close(dir_fd);
  if (!synced) fail(dir, "sync");
}

}  // namespace expr::util
