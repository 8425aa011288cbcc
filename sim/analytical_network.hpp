#pragma once
// Moved to sim/net/analytical_network.hpp; kept so existing includes keep working.
#include "sim/net/analytical_network.hpp"
