// The classic API's results for dnn_ucp_test (which includes only the UCP generation's headers:
// the two generations' headers cannot meet in one translation unit).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace openbpu::ucp_reference {

// Runs the first model of model file `path` once through the classic API (hb_dnn.h), inputs
// given densely (an NV12 input as its Y then UV bytes); returns each output's bytes.
std::vector<std::vector<uint8_t>> classic_run(const std::string& path, const std::vector<std::vector<uint8_t>>& inputs);

// hbDNNRoiInfer of model file `path` (one NV12 resizer input) on a dense NV12 image of
// width x height and `rois` (left, top, right, bottom each; one batch per ROI); returns output
// 0's bytes, every batch.
std::vector<uint8_t> classic_roi_run(const std::string& path, const std::vector<uint8_t>& nv12, int32_t width, int32_t height,
                                     const std::vector<int32_t>& rois);

}  // namespace openbpu::ucp_reference
