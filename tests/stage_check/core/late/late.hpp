// A fixture for the stage check (tests/CMakeLists.txt): a later stage, allowed to include the early one.
#pragma once
#include "early/early.hpp"
