#include "ftcost/calibrate/collectives.hpp"

#include <algorithm>
#include <cstdlib>

namespace ftcost::calib {

const std::vector<std::string>& collective_ops() {
  static const std::vector<std::string> ops{"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                            "send_recv"};
  return ops;
}

std::optional<CollectiveCounts> collective_counts(const std::string& op, std::uint64_t bytes, int ranks,
                                                  std::uint64_t elt_size) {
  if (ranks < 1 || elt_size == 0 || elt_size > 16 || 16 % elt_size != 0) return std::nullopt;
  const std::uint64_t n = static_cast<std::uint64_t>(ranks);
  const std::uint64_t count = bytes / elt_size;
  const std::uint64_t align_mask = ~(16 / elt_size - 1);  // whole 16-byte chunks per rank
  CollectiveCounts c;
  if (op == "all_reduce" || op == "send_recv") {
    c.send_count = c.recv_count = c.param_count = count;
  } else if (op == "all_gather") {
    const std::uint64_t base = (count / n) & align_mask;
    c.send_count = base;
    c.recv_count = base * n;
    c.param_count = base;
  } else if (op == "reduce_scatter") {
    const std::uint64_t base = (count / n) & align_mask;
    c.send_count = base * n;
    c.recv_count = base;
    c.param_count = base;
  } else if (op == "all_to_all") {
    c.param_count = (count / n) & align_mask;
    c.send_count = c.recv_count = n * c.param_count;
  } else {
    return std::nullopt;
  }
  if (c.param_count == 0) return std::nullopt;
  c.bytes = std::max(c.send_count, c.recv_count) * elt_size;
  return c;
}

CollectiveRow collective_row(const std::string& op, int ranks, std::uint64_t bytes, double seconds) {
  CollectiveRow r;
  r.op = op;
  r.ranks = ranks;
  r.bytes = bytes;
  r.time_us = seconds * 1e6;
  r.algbw_gbps = static_cast<double>(bytes) / seconds / 1e9;
  r.busbw_gbps = r.algbw_gbps * collective_bus_factor(op, ranks).value_or(0.0);
  return r;
}

std::vector<std::uint64_t> collective_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t factor) {
  std::vector<std::uint64_t> v;
  if (lo == 0 || hi < lo || factor < 2) return v;
  for (std::uint64_t s = lo; s <= hi; s *= factor) {
    v.push_back(s);
    if (s > hi / factor) break;
  }
  if (v.back() != hi) v.push_back(hi);
  return v;
}

CollectivePlan make_collective_plan(Mode mode, std::uint64_t max_buffer_bytes) {
  CollectivePlan p;
  p.ops = collective_ops();
  std::uint64_t hi = 1ull << 30, factor = 4;
  if (mode == Mode::full) hi = 4ull << 30, factor = 2;
  if (mode == Mode::smoke) hi = 1ull << 20, factor = 16;
  // the largest op needs a send and a receive buffer of `size` bytes each
  while (hi > 8 && 2 * hi > max_buffer_bytes) hi /= 2;
  p.sizes = collective_sizes(8, hi, factor);
  p.p2p_bytes = std::min<std::uint64_t>(mode == Mode::smoke ? (8ull << 20) : (256ull << 20), hi);
  p.timing = mode == Mode::smoke ? TimingPolicy{1, 3, 3, 0.5, 1.0} : TimingPolicy{5, 5, 30, 2.0, 0.02};
  p.iters_per_sample = mode == Mode::smoke ? 2 : 20;
  return p;
}

namespace {
std::optional<int> env_int(const std::function<const char*(const char*)>& g, const char* name) {
  const char* v = g(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1000000) return -1;  // present but not a count
  return static_cast<int>(x);
}
}  // namespace

Result<Launch> detect_launch(const std::function<const char*(const char*)>& getenv_fn) {
  struct Names {
    const char* launcher;
    const char *size, *rank, *local_rank, *local_size;
  };
  // Open MPI's mpirun; MPICH/Intel MPI's Hydra; Slurm's srun
  const Names sets[] = {
      {"openmpi", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"mpich/hydra", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
      {"slurm", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
  };
  for (const Names& s : sets) {
    auto size = env_int(getenv_fn, s.size);
    auto rank = env_int(getenv_fn, s.rank);
    if (!size && !rank) continue;
    Launch l;
    l.launcher = s.launcher;
    if (!size || !rank || *size < 1 || *rank < 0) {
      return make_error(
          Errc::invalid_value, std::string(s.size) + "/" + s.rank,
          std::string("launched by ") + s.launcher + " but the rank variables are missing or not numbers");
    }
    if (*rank >= *size) {
      return make_error(
          Errc::invalid_value, s.rank,
          "rank " + std::to_string(*rank) + " is not below the world size " + std::to_string(*size));
    }
    l.world_size = *size;
    l.rank = *rank;
    auto lr = env_int(getenv_fn, s.local_rank);
    auto ls = env_int(getenv_fn, s.local_size);
    l.local_rank = lr && *lr >= 0 ? *lr : 0;
    l.local_size = ls && *ls >= 1 ? *ls : 1;
    if (l.local_rank >= l.local_size && ls) {
      return make_error(Errc::invalid_value, s.local_rank,
                        "local rank " + std::to_string(l.local_rank) + " is not below the local size " +
                            std::to_string(l.local_size));
    }
    return l;
  }
  return Launch{};
}

Result<int> device_for_rank(const Launch& l, int visible_devices) {
  if (visible_devices < 1) return make_error(Errc::invalid_value, "devices", "no CUDA device visible");
  if (l.local_size > visible_devices) {
    return make_error(
        Errc::invalid_value, "mpirun",
        std::to_string(l.local_size) + " ranks on this node but " + std::to_string(visible_devices) +
            " visible GPU(s): start one rank per GPU (mpirun -np <nodes x GPUs> --map-by ppr:<GPUs>:node)");
  }
  return l.local_rank % visible_devices;
}

}  // namespace ftcost::calib
