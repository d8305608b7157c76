// docs/nightly.md, tested as written: its "once" block (calibrate) and its nightly.sh, taken from
// the page itself, run on the CPU series in place of series 3, night after night.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness.hpp"

namespace fs = std::filesystem;
using e2e::has;

namespace {

// The code block that follows the marker `<!-- tested: NAME -->` in docs/nightly.md.
std::string tested_block(const std::string& page, const std::string& name) {
  const auto marker = page.find("<!-- tested: " + name + " -->");
  REQUIRE(marker != std::string::npos);
  const auto open = page.find("```sh\n", marker);
  REQUIRE(open != std::string::npos);
  const auto begin = open + 6;
  return page.substr(begin, page.find("```", begin) - begin);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

// Runs `command` with sh in `dir`, the built expr first on PATH, as the page's reader would.
e2e::Outcome shell(const fs::path& dir, const std::string& command) {
  const auto bin = fs::path(EXPR_BINARY).parent_path().string();
  const auto line = "cd '" + dir.string() + "' && PATH='" + bin + "':\"$PATH\" " + command + " > stdout.txt 2> stderr.txt";
  const int status = std::system(line.c_str());
  e2e::Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = e2e::read_text(dir / "stdout.txt");
  o.err = e2e::read_text(dir / "stderr.txt");
  return o;
}

std::vector<fs::path> nights(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir / "runs"))
    if (e.path().filename().string().starts_with("nightly-")) out.push_back(e.path());
  return out;
}

}  // namespace

TEST_CASE("docs/nightly.md: calibrate once, then nightly.sh gates each night against the last good one") {
  const auto dir = e2e::scratch("nightly_recipe");
  const auto page = e2e::read_text(EXPR_SOURCE_DIR "/docs/nightly.md");
  const std::string cpu_series = EXPR_SOURCE_DIR "/tests/series/cpu.yaml";
  e2e::write(dir, "once.sh", replaced(tested_block(page, "once"), "experiments/series3.yaml", cpu_series));
  e2e::write(dir, "nightly.sh", tested_block(page, "nightly.sh"));
  fs::permissions(dir / "nightly.sh", fs::perms::owner_exec, fs::perm_options::add);

  const auto once = shell(dir, "sh -e once.sh");
  INFO(once.all());
  REQUIRE(once.exit_code == 0);
  CHECK(fs::exists(dir / "runs" / "history.sqlite"));

  for (std::size_t night = 1; night <= 2; ++night) {
    const auto o = shell(dir, "./nightly.sh '" + cpu_series + "'");
    INFO("night ", night, "\n", o.all());
    // The gate decided (passed, or a timing moved on this shared machine): it compared something.
    CHECK((o.exit_code == 0 || o.exit_code == 5));
    CHECK(has(o.out, o.exit_code == 0 ? "nightly: the gate passed" : "nightly: REGRESSION"));
    const auto runs = nights(dir);
    REQUIRE(runs.size() == night);
    for (const auto& run : runs) {
      CHECK(fs::exists(run / "junit.xml"));
      CHECK(fs::exists(run / "report.html"));
      CHECK(has(e2e::read_text(run / "summary.md"), "## Against the baseline"));
    }
  }
}
