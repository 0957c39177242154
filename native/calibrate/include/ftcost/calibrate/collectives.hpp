// The host side of `ftcost-calibrate --collectives` (no CUDA, no NCCL, no MPI here; tested without a
// GPU): the message sizes, the element counts of each collective at a size exactly as nccl-tests chooses
// them, the row (algbw, busbw) from a measured time, and how this process was launched (alone, or as one
// rank of mpirun).
//
// nccl-tests (github:NVIDIA/nccl-tests, HEAD a0b82b2, 2026-07-09; excerpts in
// docs/sources/nccl-tests-bandwidth.md):
//   src/all_reduce.cu AllReduceGetCollByteCount: send = recv = count
//   src/all_gather.cu AllGatherGetCollByteCount: base = (count/nranks) & ~(16/eltSize - 1); send = base,
//                     recv = base*nranks
//   src/reduce_scatter.cu ReduceScatterGetCollByteCount: base as above; send = base*nranks, recv = base
//   src/alltoall.cu AlltoAllGetCollByteCount: per peer = (count/nranks) & ~(16/eltSize - 1);
//                     send = recv = nranks*per peer
//   src/sendrecv.cu SendRecvGetCollByteCount: send = recv = count (to rank+1, from rank-1)
//   src/common.cu: the reported size is max(sendBytes, expectedBytes); *GetBw: algbw = size / time,
//                     busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter,
//                     all-to-all), 1 (send/recv)
#pragma once

#include "ftcost/calibrate/plan.hpp"
#include "ftcost/calibration.hpp"
#include "ftcost/error.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ftcost::calib {

const std::vector<std::string>&
collective_ops();  // all_reduce, all_gather, reduce_scatter, all_to_all, send_recv

struct CollectiveCounts {
  std::uint64_t send_count = 0;   // elements in each rank's send buffer
  std::uint64_t recv_count = 0;   // elements in each rank's receive buffer
  std::uint64_t param_count = 0;  // the count passed to NCCL (per peer for all_to_all)
  std::uint64_t bytes = 0;        // nccl-tests' size: max(send, recv) x element size
};
// For a requested size of `bytes` (nccl-tests' -b/-e value); nullopt when the size rounds to nothing
// for this op and rank count, or for an unknown op.
std::optional<CollectiveCounts> collective_counts(const std::string& op, std::uint64_t bytes, int ranks,
                                                  std::uint64_t elt_size);

// The calibration row for a measured time per operation (seconds).
CollectiveRow collective_row(const std::string& op, int ranks, std::uint64_t bytes, double seconds);

// Message sizes: `lo` to `hi` bytes, each `factor` times the last (nccl-tests -b -e -f), hi included.
std::vector<std::uint64_t> collective_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor);

struct CollectivePlan {
  std::vector<std::string> ops;
  std::vector<std::uint64_t> sizes;
  std::uint64_t p2p_bytes = 0;  // per copy of the P2P matrix
  TimingPolicy timing;
  int iters_per_sample = 20;  // operations per timed batch (nccl-tests -n): the mean is one sample
};
// quick: 8 B .. 1 GiB x4; full: 8 B .. 4 GiB x2; smoke: 8 B .. 1 MiB x16. The largest size is capped so
// that the buffers fit in `max_buffer_bytes` per GPU (send + receive of the biggest op).
CollectivePlan make_collective_plan(Mode mode, std::uint64_t max_buffer_bytes);

// ---- how this process was started ---------------------------------------------------------------
struct Launch {
  int world_size = 1;
  int rank = 0;
  int local_rank = 0;
  int local_size = 1;
  std::string launcher;  // "" (alone), "openmpi", "mpich/hydra", "slurm"
  bool under_mpi() const { return world_size > 1 || !launcher.empty(); }
};
// From the environment that mpirun / srun set (OMPI_COMM_WORLD_*, PMI_*, MPI_LOCALRANKID, SLURM_*).
// `getenv` is injectable for tests. An error when the variables are inconsistent (rank >= size, ...).
Result<Launch> detect_launch(const std::function<const char*(const char*)>& getenv_fn);

// The GPU of this rank: local_rank modulo the visible devices (one process per GPU is the intended
// layout); an error when there are more local ranks than GPUs.
Result<int> device_for_rank(const Launch& l, int visible_devices);

}  // namespace ftcost::calib
