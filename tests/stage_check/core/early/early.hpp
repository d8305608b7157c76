// A fixture for the stage check (tests/CMakeLists.txt): an early stage that wrongly includes a later one.
#pragma once
#include "late/late.hpp"
