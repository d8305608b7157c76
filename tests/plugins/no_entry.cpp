// A perfectly good shared library that is not an expr plugin.
extern "C" int not_a_plugin() { return 42; }
