// File names made from tensor, layer and model names (dumps, .npy outputs, calibration folders).
#pragma once

#include <string>
#include <string_view>

namespace openbpu::base {

// `name` with every character outside [A-Za-z0-9._-] replaced by '_' ("conv1/out:0" →
// "conv1_out_0"). For a piece of a longer file name; the result may be empty, "." or "..".
std::string file_name_part(std::string_view name);

// file_name_part(name), made a name of its own: "", "." and ".." get a '_' in front.
std::string safe_file_name(std::string_view name);

}  // namespace openbpu::base
