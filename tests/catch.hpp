#pragma once
// The one place that knows which Catch2 is installed (Debian 12: v2).
#include <catch2/catch.hpp>
