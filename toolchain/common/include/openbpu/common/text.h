// Number formatting for the host tools' logs and reports.
#pragma once

#include <string>

namespace openbpu {

// `value` with `digits` digits after the point ("3.83"), as printf's %.<digits>f.
std::string fixed(double value, int digits);

}  // namespace openbpu
