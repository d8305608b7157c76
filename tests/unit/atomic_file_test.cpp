// Atomic results files (util/atomic_file.hpp): a reader sees the old contents or the new, whole,
// never a part; a writer killed in the middle leaves the last complete file; a failed write leaves
// no temporary behind, and neither does a file made piece by piece whose maker fails. Durable
// appends to a journal.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/atomic_file.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("expr_atomic_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("a file made piece by piece is written whole, and one whose maker fails leaves the old file") {
  const auto dir = fresh_dir("pieces");
  const auto file = dir / "results.json";
  expr::util::write_atomically(file, "old");
  // More than one block of pieces (they are written a MiB at a time).
  const std::string piece(1000, 'x');
  expr::util::write_atomically(file, [&](const expr::util::WritePiece& write) {
    for (int i = 0; i < 3000; ++i) write(piece);
    write("end");
  });
  const auto written = read(file);
  CHECK(written.size() == 3000 * piece.size() + 3);
  CHECK(written.substr(written.size() - 4) == "xend");
  CHECK_THROWS_WITH(expr::util::write_atomically(file,
                                                 [&](const expr::util::WritePiece& write) {
                                                   write(piece);
                                                   throw std::runtime_error("the maker failed");
                                                 }),
                    "the maker failed");
  CHECK(read(file) == written);
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("a file written atomically replaces the old one whole and leaves no temporary") {
  const auto dir = fresh_dir("replace");
  expr::util::write_atomically(dir / "results.json", "old");
  expr::util::write_atomically(dir / "results.json", "new contents");
  CHECK(read(dir / "results.json") == "new contents");
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("a write that cannot replace its file throws, naming it, and leaves no temporary") {
  const auto dir = fresh_dir("fail");
  fs::create_directories(dir / "results.json" / "in_the_way");  // a directory cannot be renamed over
  const auto message = (dir / "results.json").string() + ": cannot replace: Is a directory";
  CHECK_THROWS_WITH(expr::util::write_atomically(dir / "results.json", "x"), doctest::Contains(message.c_str()));
  CHECK(entries(dir) == 1);
  CHECK(fs::exists(dir / "results.json" / "in_the_way"));
  CHECK_THROWS_WITH(expr::util::write_atomically(dir / "missing" / "results.json", "x"), doctest::Contains("No such file or directory"));
  fs::remove_all(dir);
}

TEST_CASE("a writer killed in the middle of writing leaves the last complete file") {
  // Two large contents, written in turn as fast as possible by a child that is killed at a
  // different moment each round: the file must always be one of them, whole.
  const auto dir = fresh_dir("killed");
  const auto file = dir / "results.json";
  const std::string a(4 << 20, 'a'), b(3 << 20, 'b');
  expr::util::write_atomically(file, a);
  for (int round = 0; round < 20; ++round) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      for (bool first = false;; first = !first) expr::util::write_atomically(file, first ? a : b);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + 7 * round));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    const auto contents = read(file);
    CAPTURE(round);
    CHECK((contents == a || contents == b));
  }
  fs::remove_all(dir);
}

TEST_CASE("records appended durably accumulate in order, the file created by the first") {
  const auto dir = fresh_dir("append");
  expr::util::append_durably(dir / "experiments.jsonl", "one\n");
  expr::util::append_durably(dir / "experiments.jsonl", "two\n");
  CHECK(read(dir / "experiments.jsonl") == "one\ntwo\n");
  CHECK_THROWS_WITH_AS(expr::util::append_durably(dir / "missing" / "x.jsonl", "r\n"), doctest::Contains("cannot append to"), std::runtime_error);
  fs::remove_all(dir);
}
