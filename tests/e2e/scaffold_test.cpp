// `expr new`: the files it writes, a series file that validates as written, and the refusals (a
// name that cannot name a plugin, a file that exists). Building and running what it writes against
// an installed expr is tests/sdk's. The templates are files, core/cli/templates/, compiled in.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <utility>

#include "harness.hpp"

namespace fs = std::filesystem;

TEST_CASE("new series writes a commented series for a plugin, which validates as written") {
  const auto dir = e2e::scratch("new_series");
  auto o = e2e::expr(dir, "new series demo --plugin faulty");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  CHECK(o.out.find("wrote ./demo.yaml") != std::string::npos);
  // Every parameter of the plugin, at its default, with its documentation.
  const auto text = e2e::read_text(dir / "demo.yaml");
  CHECK(text.find("fault: \"none\"") != std::string::npos);
  CHECK(text.find("size: 4096") != std::string::npos);
  CHECK(text.find("# elements summed per run") != std::string::npos);
  o = e2e::expr(dir, "validate demo.yaml");
  INFO(o.all());
  CHECK(o.exit_code == 0);
  // Written once: a second time changes nothing.
  o = e2e::expr(dir, "new series demo --plugin faulty");
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("demo.yaml exists already; nothing was written") != std::string::npos);
  o = e2e::expr(dir, "new series other --plugin no_such_plugin");
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("no plugin 'no_such_plugin'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "other.yaml"));
}

TEST_CASE("new plugin writes the project's four files, and refuses a bad name or files that exist") {
  const auto dir = e2e::scratch("new_plugin");
  auto o = e2e::expr(dir, "new plugin my_probe --cuda");
  INFO(o.all());
  REQUIRE(o.exit_code == 0);
  for (const auto* file : {"CMakeLists.txt", "my_probe.cu", "my_probe.yaml", "README.md"}) CHECK(fs::is_regular_file(dir / "my_probe" / file));
  CHECK(e2e::read_text(dir / "my_probe" / "my_probe.cu").find("EXPR_PLUGIN(MyProbe)") != std::string::npos);
  CHECK(e2e::read_text(dir / "my_probe" / "CMakeLists.txt").find("expr_add_plugin(my_probe my_probe.cu)\ntarget_link_libraries(") != std::string::npos);
  // The source is its template, core/cli/templates/plugin_cuda.cu, byte for byte with the names in.
  auto source = e2e::read_text(EXPR_SOURCE_DIR "/core/cli/templates/plugin_cuda.cu");
  for (const auto& [placeholder, value] : {std::pair<std::string, std::string>{"@CLASS@", "MyProbe"}, {"@NAME@", "my_probe"}})
    for (auto at = source.find(placeholder); at != std::string::npos; at = source.find(placeholder)) source.replace(at, placeholder.size(), value);
  CHECK(e2e::read_text(dir / "my_probe" / "my_probe.cu") == source);
  // The build tree's expr is not an installed one; it says so.
  CHECK(o.err.find("is not an installed one") != std::string::npos);
  // ... and its advice is the one the project's files give: install to $HOME/expr, build against it.
  CHECK(o.err.find("--prefix $HOME/expr") != std::string::npos);
  CHECK(e2e::read_text(dir / "my_probe" / "README.md").find("-DCMAKE_PREFIX_PATH=$HOME/expr") != std::string::npos);
  o = e2e::expr(dir, "new plugin my_probe");
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("my_probe/CMakeLists.txt") != std::string::npos);
  CHECK(o.err.find("nothing was written") != std::string::npos);
  o = e2e::expr(dir, "new plugin 2fast --dir other");
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("'2fast' cannot name a plugin") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "other"));
  o = e2e::expr(dir, "new plugin both --torch --cuda");
  CHECK(o.exit_code == 2);
}
