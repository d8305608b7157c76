// A run directory's journal (report/run_directory.hpp): each experiment appended as it finishes,
// read back over results.json by every reader, a later record replacing an earlier one of the same
// experiment, a last record cut short by a crash skipped, and anything else malformed named with
// its line; and results.json's text, written an experiment at a time with each array of samples on
// one line.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "outcome/measurement_json.hpp"
#include "report/run_directory.hpp"

namespace fs = std::filesystem;
using namespace expr;

namespace {

report::ExperimentResult finished(const std::string& name, outcome::Status status) {
  report::ExperimentResult e;
  e.measurement.experiment = name;
  e.measurement.plugin = "waiter";
  e.measurement.status = status;
  e.family = name;
  return e;
}

// A run directory whose results.json was written as the run began, with one experiment restored.
report::RunDirectory begun(const std::string& test) {
  const auto root = fs::temp_directory_path() / ("expr_unit_journal_" + test + "_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const report::RunDirectory dir(root);
  report::RunResult run;
  run.id = "r";
  run.series = "s";
  run.planned = 3;
  run.experiments.push_back(finished("a", outcome::Status::interrupted));
  dir.write_results(run);
  return dir;
}

const outcome::Measurement& named(const report::RunResult& run, const std::string& name) {
  const auto* e = run.find(name);
  REQUIRE(e);
  return e->measurement;
}

}  // namespace

TEST_CASE("a killed run's experiments are read from its journal over results.json, the later record of one experiment winning") {
  const auto dir = begun("overlay");
  dir.journal_experiment(finished("b", outcome::Status::ok));
  dir.journal_experiment(finished("a", outcome::Status::ok));  // run again after a resume
  const auto run = dir.read();
  REQUIRE(run.experiments.size() == 2);
  CHECK(named(run, "a").status == outcome::Status::ok);
  CHECK(named(run, "b").status == outcome::Status::ok);
  CHECK(run.planned == 3);
  // Once results.json holds them, the journal goes, and nothing is lost.
  dir.write_results(run);
  dir.retire_journal();
  CHECK(!fs::exists(dir.journal()));
  CHECK(dir.read().experiments.size() == 2);
  fs::remove_all(dir.root());
}

TEST_CASE("a journal record cut short by a crash is skipped, and a malformed line before the last is an error naming the line") {
  const auto dir = begun("cut");
  dir.journal_experiment(finished("b", outcome::Status::ok));
  {
    std::ofstream journal(dir.journal(), std::ios::app);
    journal << R"({"name": "c", "plugin": "wai)";  // no newline: the append never finished
  }
  const auto run = dir.read();
  CHECK(run.experiments.size() == 2);
  CHECK(!run.find("c"));
  {
    std::ofstream journal(dir.journal(), std::ios::app);
    journal << "\n" << R"({"name": "d"})" << "\n";
  }
  CHECK_THROWS_WITH_AS(dir.read(), doctest::Contains((dir.journal().string() + ":2: malformed").c_str()), std::runtime_error);
  fs::remove_all(dir.root());
}

TEST_CASE("results.json written an experiment at a time is the whole run's document, byte for byte, each array of samples on one line") {
  const auto recorded = report::RunDirectory(EXPR_SOURCE_DIR "/tests/data/series3-h200").read();
  const auto root = fs::temp_directory_path() / ("expr_unit_results_text_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const report::RunDirectory dir(root);
  auto run = recorded;
  run.run_dir = root;
  REQUIRE(run.experiments.size() > 1);
  dir.write_results(run);
  std::ifstream in(dir.results());
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  CHECK(written == report::results_text(report::to_json(run, dir)) + "\n");
  CHECK(nlohmann::json::parse(written) == report::to_json(run, dir));
  // Indented, but no number on a line of its own: the recorded run has over 10,000 samples.
  const auto& naive = run.find("naive")->measurement;
  REQUIRE(naive.host);
  REQUIRE(naive.host->samples.size() > 100);
  CHECK(written.find("\"samples_ns\": " + nlohmann::json(naive.host->samples).dump() + ",\n") != std::string::npos);
  CHECK(written.find("\n  \"experiments\": [\n    {\n      \"axes\": [],\n") != std::string::npos);
  std::istringstream lines(written);
  std::size_t count = 0, bare_numbers = 0;
  for (std::string line; std::getline(lines, line); ++count)
    if (line.find_first_not_of(" 0123456789.,-e") == std::string::npos) ++bare_numbers;
  CHECK(bare_numbers == 0);
  CHECK(count < 2000);
  run.experiments.clear();
  dir.write_results(run);
  CHECK(dir.read().experiments.empty());
  fs::remove_all(root);
}

TEST_CASE("a count beyond what its field holds is a malformed results file, not undefined behaviour (the run_dir fuzzer's finding)") {
  const auto root = fs::temp_directory_path() / ("expr_unit_results_range_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  fs::copy_file(EXPR_SOURCE_DIR "/fuzz/known/run_dir/iteration-count-beyond-int", root / "results.json");
  CHECK_THROWS_WITH_AS(report::RunDirectory(root).read(), doctest::Contains("results.json: malformed: iterations.traced is 6.666666666666666e+35, not a whole number from -2147483648 to 2147483647"), std::runtime_error);
  CHECK(outcome::whole_number<int>(nlohmann::json(3.0), "n") == 3);
  CHECK(outcome::whole_number<std::size_t>(nlohmann::json(4096), "n") == 4096);
  CHECK_THROWS_AS(outcome::whole_number<int>(nlohmann::json(2147483648.0), "n"), std::invalid_argument);
  CHECK_THROWS_AS(outcome::whole_number<std::size_t>(nlohmann::json(-1), "n"), std::invalid_argument);
  CHECK_THROWS_AS(outcome::whole_number<int>(nlohmann::json(1.5), "n"), std::invalid_argument);
  CHECK_THROWS_AS(outcome::whole_number<std::int64_t>(nlohmann::json(9.3e18), "n"), std::invalid_argument);
  fs::remove_all(root);
}
