// The virtual BPU behind the driver interface (bpu_driver.h): one simulator::Device per core
// of the march. The only libdnn header that names the simulator.
#pragma once

#include "openbpu/dnn/bpu_driver.h"
#include "openbpu/simulator/device.h"

namespace openbpu::dnn {

// The simulator device behind core `core` of a driver made by make_simulator_driver(), or
// nullptr for another driver (tests observe preemption through it).
simulator::Device* simulator_device(BpuDriver& driver, int core);

}  // namespace openbpu::dnn
