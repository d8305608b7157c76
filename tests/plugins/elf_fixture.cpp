// Makes a damaged copy of a shared library for the loader's tests, at build time, so that no binary
// is checked in: elf_fixture IN OUT [truncate=BYTES] [byte=OFFSET:VALUE]...
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: elf_fixture IN OUT [truncate=BYTES] [byte=OFFSET:VALUE]...\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.empty()) {
    std::cerr << "elf_fixture: cannot read " << argv[1] << "\n";
    return 1;
  }
  for (int i = 3; i < argc; ++i) {
    const std::string edit = argv[i];
    if (edit.starts_with("truncate=")) {
      bytes.resize(std::min(bytes.size(), std::stoul(edit.substr(9))));
    } else if (edit.starts_with("byte=")) {
      const auto colon = edit.find(':');
      bytes.at(std::stoul(edit.substr(5, colon - 5))) = static_cast<char>(std::stoi(edit.substr(colon + 1)));
    } else {
      std::cerr << "elf_fixture: unknown edit '" << edit << "'\n";
      return 2;
    }
  }
  std::ofstream(argv[2], std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return 0;
}
