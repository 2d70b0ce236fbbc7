// Which sensitive nodes compute in int16 (conversion stage 3, calibration_type default / mix on
// a march with int16).
//
// The sensitivity ranking (calibration/node_sensitivity.h) scores every quantized node with
// only it quantized; a node below kInt16Cutoff gains from int16. What int16 costs is the timing
// model's estimate of the node in int16 minus in int8 (simulator::operation_cycles, from the
// node's shapes in the calibrated graph, before anything is compiled). Nodes are taken by gain
// per cycle, (1 − score) / cost, ties in ranking order, while their costs add up to at most
// kInt16Budget of the int8 cycles of all ranked nodes; one that does not fit is passed over
// for cheaper ones. A count of nodes would not do: on PP-OCRv4 rec the most sensitive quarter
// costs +44% and the remaining nodes below the cutoff +3% more, on det they double it.
#pragma once

#include <string>
#include <vector>

#include "openbpu/calibration/node_sensitivity.h"
#include "openbpu/ir/graph.h"
#include "openbpu/simulator/march.h"

namespace openbpu::pipeline {

inline constexpr double kInt16Cutoff = 0.9999;  // scores at or above it gain nothing
inline constexpr double kInt16Budget = 0.5;     // of the ranked nodes' int8 cycles

struct Int16Choice {
  std::vector<std::string> nodes;  // in ranking order
  uint64_t int8_cycles = 0;        // all ranked nodes in int8
  uint64_t added_cycles = 0;       // what the chosen nodes add in int16
};

Int16Choice choose_int16_nodes(const ir::Graph& calibrated,
                               const std::vector<calibration::NodeSensitivity>& ranking,
                               const simulator::MarchSpec& march, double budget = kInt16Budget);

}  // namespace openbpu::pipeline
