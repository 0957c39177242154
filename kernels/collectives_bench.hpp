// `ftcost-calibrate --collectives`: NCCL collectives across the GPUs of this process (one communicator
// per visible GPU, ncclCommInitAll) or, under mpirun with an MPI build, one GPU per rank across nodes
// (ncclCommInitRank, the unique id broadcast with MPI_Bcast), and the GPU-to-GPU copy matrix. Plain C++
// (host code linked with the CUDA runtime and the dlopen'ed NCCL).
#pragma once

#include "ftcost/calibrate/collectives.hpp"
#include "ftcost/calibration.hpp"
#include "ftcost/error.hpp"

#include <csignal>

namespace ftcost::calib {

// Fills cal.measurements.collectives (and .p2p in a single process) and notes; an error when the run could
// not start (NCCL initialisation) or stopped. Under MPI every rank measures, rank 0's `cal` gets the rows.
Status run_collectives_main(Calibration& cal, Mode mode, const Launch& launch, int visible_devices,
                            const volatile std::sig_atomic_t* cancel);

}  // namespace ftcost::calib
