#include "openbpu/common/text.h"

#include <iomanip>
#include <sstream>

namespace openbpu {

std::string fixed(double value, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << value;
  return s.str();
}

}  // namespace openbpu
