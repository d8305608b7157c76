// Exports the entry points by hand with an ABI version this expr does not speak.
#include <cstdint>

extern "C" __attribute__((visibility("default"))) std::uint32_t expr_plugin_abi_version() { return 999; }
extern "C" __attribute__((visibility("default"))) void* expr_plugin_create() { return nullptr; }
