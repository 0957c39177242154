#include "collectives_bench.hpp"

#include "ftcost/calibrate/stats.hpp"

#include <cuda_runtime.h>

#include <nccl.h>
#ifdef FTCOST_WITH_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ftcost::calib {

namespace {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void cuda_ok(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw Failure(std::string(call) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}
void nccl_ok(ncclResult_t r, const char* call) {
  if (r != ncclSuccess) throw Failure(std::string(call) + ": " + ncclGetErrorString(r));
}
#define CU(x) cuda_ok((x), #x)
#define NC(x) nccl_ok((x), #x)

void log(const std::string& s) { std::fprintf(stderr, "ftcost-calibrate: %s\n", s.c_str()); }

// One GPU of this process: its communicator, stream and buffers.
struct Rank {
  int device = 0;
  int rank = 0;  // in the communicator
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

class World {
 public:
  World(const Launch& l, int visible) : launch_(l) {
    if (l.world_size > 1) {
#ifdef FTCOST_WITH_MPI
      int inited = 0;
      MPI_Initialized(&inited);
      if (!inited) MPI_Init(nullptr, nullptr);
      mpi_ = true;
      auto dev = device_for_rank(l, visible);
      if (!dev.ok()) throw Failure(dev.error().to_string());
      ranks_.resize(1);
      ranks_[0].device = dev.value();
      ranks_[0].rank = l.rank;
      nranks_ = l.world_size;
      ncclUniqueId id{};
      if (l.rank == 0) NC(ncclGetUniqueId(&id));
      MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
      CU(cudaSetDevice(ranks_[0].device));
      NC(ncclCommInitRank(&ranks_[0].comm, nranks_, id, l.rank));
#else
      (void)visible;
      throw Failure("this build has no MPI");
#endif
    } else {
      nranks_ = visible;
      ranks_.resize(static_cast<std::size_t>(visible));
      std::vector<ncclComm_t> comms(static_cast<std::size_t>(visible));
      std::vector<int> devs;
      for (int i = 0; i < visible; ++i) devs.push_back(i);
      NC(ncclCommInitAll(comms.data(), visible, devs.data()));
      for (int i = 0; i < visible; ++i) {
        ranks_[static_cast<std::size_t>(i)].device = i;
        ranks_[static_cast<std::size_t>(i)].rank = i;
        ranks_[static_cast<std::size_t>(i)].comm = comms[static_cast<std::size_t>(i)];
      }
    }
    for (auto& r : ranks_) {
      CU(cudaSetDevice(r.device));
      CU(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    }
  }
  ~World() {
    for (auto& r : ranks_) {
      cudaSetDevice(r.device);
      if (r.stream) cudaStreamSynchronize(r.stream);
      if (r.send) cudaFree(r.send);
      if (r.recv) cudaFree(r.recv);
      if (r.comm) ncclCommDestroy(r.comm);
      if (r.stream) cudaStreamDestroy(r.stream);
    }
#ifdef FTCOST_WITH_MPI
    if (mpi_) {
      int fin = 0;
      MPI_Finalized(&fin);
      if (!fin) MPI_Finalize();
    }
#endif
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int nranks() const { return nranks_; }
  std::vector<Rank>& ranks() { return ranks_; }
  bool root() const { return launch_.rank == 0; }

  // smallest free memory over this process's GPUs (and all ranks under MPI)
  std::uint64_t min_free_bytes() {
    std::uint64_t m = ~0ull;
    for (auto& r : ranks_) {
      CU(cudaSetDevice(r.device));
      std::size_t free_b = 0, total = 0;
      CU(cudaMemGetInfo(&free_b, &total));
      m = std::min<std::uint64_t>(m, free_b);
    }
#ifdef FTCOST_WITH_MPI
    if (mpi_) {
      unsigned long long v = m, g = 0;
      MPI_Allreduce(&v, &g, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
      m = g;
    }
#endif
    return m;
  }
  void alloc(std::uint64_t bytes) {
    for (auto& r : ranks_) {
      CU(cudaSetDevice(r.device));
      CU(cudaMalloc(&r.send, bytes));
      CU(cudaMalloc(&r.recv, bytes));
      CU(cudaMemset(r.send, 0, bytes));
      CU(cudaMemset(r.recv, 0, bytes));
      CU(cudaDeviceSynchronize());  // the NCCL streams are non-blocking: nothing orders them after these
    }
  }
  // the mean over ranks of a per-rank time (nccl-tests averages the ranks' times, src/common.cu)
  double mean_over_ranks(double seconds) {
#ifdef FTCOST_WITH_MPI
    if (mpi_) {
      double sum = 0;
      MPI_Allreduce(&seconds, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      return sum / nranks_;
    }
#endif
    return seconds;
  }
  bool any(bool v) {
#ifdef FTCOST_WITH_MPI
    if (mpi_) {
      int x = v ? 1 : 0, g = 0;
      MPI_Allreduce(&x, &g, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      return g != 0;
    }
#endif
    return v;
  }

 private:
  Launch launch_;
  std::vector<Rank> ranks_;
  int nranks_ = 0;
  bool mpi_ = false;
};

// Enqueues one operation on every GPU of this process (a group, as single-process multi-GPU NCCL needs).
void enqueue(World& w, const std::string& op, const CollectiveCounts& c) {
  const int n = w.nranks();
  NC(ncclGroupStart());
  for (auto& r : w.ranks()) {
    if (op == "all_reduce") {
      NC(ncclAllReduce(r.send, r.recv, c.param_count, ncclFloat, ncclSum, r.comm, r.stream));
    } else if (op == "all_gather") {
      NC(ncclAllGather(r.send, r.recv, c.param_count, ncclFloat, r.comm, r.stream));
    } else if (op == "reduce_scatter") {
      NC(ncclReduceScatter(r.send, r.recv, c.param_count, ncclFloat, ncclSum, r.comm, r.stream));
    } else if (op == "all_to_all") {  // grouped send/recv to every peer, as nccl-tests' alltoall
      const std::size_t chunk = c.param_count * sizeof(float);
      for (int p = 0; p < n; ++p) {
        NC(ncclSend(static_cast<char*>(r.send) + static_cast<std::size_t>(p) * chunk, c.param_count,
                    ncclFloat, p, r.comm, r.stream));
        NC(ncclRecv(static_cast<char*>(r.recv) + static_cast<std::size_t>(p) * chunk, c.param_count,
                    ncclFloat, p, r.comm, r.stream));
      }
    } else {  // send_recv: to rank+1, from rank-1 (nccl-tests src/sendrecv.cu)
      NC(ncclSend(r.send, c.param_count, ncclFloat, (r.rank + 1) % n, r.comm, r.stream));
      NC(ncclRecv(r.recv, c.param_count, ncclFloat, (r.rank - 1 + n) % n, r.comm, r.stream));
    }
  }
  NC(ncclGroupEnd());
}

void sync_all(World& w) {
  for (auto& r : w.ranks()) {
    CU(cudaSetDevice(r.device));
    CU(cudaStreamSynchronize(r.stream));
  }
}

// Correctness at one small size: every rank's send buffer holds rank+1 (floats); the receive buffers must
// hold what the collective defines.
std::string check_op(World& w, const std::string& op) {
  const int n = w.nranks();
  auto c = collective_counts(op, std::uint64_t{1} << 16, n, sizeof(float));
  if (!c) return "";
  for (auto& r : w.ranks()) {
    std::vector<float> v(c->send_count);
    std::fill(v.begin(), v.end(), static_cast<float>(r.rank + 1));
    CU(cudaSetDevice(r.device));
    CU(cudaMemcpy(r.send, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
    CU(cudaMemset(r.recv, 0xFF, c->recv_count * sizeof(float)));
    CU(cudaDeviceSynchronize());  // a pageable copy may still be in flight; the NCCL stream does not wait
  }
  enqueue(w, op, *c);
  sync_all(w);
  for (auto& r : w.ranks()) {
    std::vector<float> got(c->recv_count);
    CU(cudaSetDevice(r.device));
    CU(cudaMemcpy(got.data(), r.recv, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < got.size(); ++i) {
      float want = 0;
      if (op == "all_reduce" || op == "reduce_scatter") {
        want = static_cast<float>(n) * static_cast<float>(n + 1) / 2.0f;
      } else if (op == "all_gather" || op == "all_to_all") {
        want = static_cast<float>(i / c->param_count + 1);  // block p comes from rank p
      } else {
        want = static_cast<float>((r.rank - 1 + n) % n + 1);
      }
      if (got[i] != want) {
        return op + ": rank " + std::to_string(r.rank) + " element " + std::to_string(i) + " is " +
               std::to_string(got[i]) + ", expected " + std::to_string(want);
      }
    }
  }
  return "";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void p2p_matrix(World& w, Calibration& cal, std::uint64_t bytes, const TimingPolicy& policy) {
  const int n = static_cast<int>(w.ranks().size());
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      int can = 0;
      CU(cudaDeviceCanAccessPeer(&can, s, d));
      Rank& rs = w.ranks()[static_cast<std::size_t>(s)];
      Rank& rd = w.ranks()[static_cast<std::size_t>(d)];
      CU(cudaSetDevice(s));
      if (can) {
        cudaError_t e = cudaDeviceEnablePeerAccess(d, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          (void)cudaGetLastError();
        else
          CU(e);
      }
      cudaEvent_t a = nullptr, b = nullptr;
      CU(cudaEventCreate(&a));
      CU(cudaEventCreate(&b));
      Sampler sampler(policy);
      for (int i = 0; i < policy.warmup; ++i)
        CU(cudaMemcpyPeerAsync(rd.recv, d, rs.send, s, bytes, rs.stream));
      const auto t0 = std::chrono::steady_clock::now();
      do {
        CU(cudaEventRecord(a, rs.stream));
        CU(cudaMemcpyPeerAsync(rd.recv, d, rs.send, s, bytes, rs.stream));
        CU(cudaEventRecord(b, rs.stream));
        CU(cudaEventSynchronize(b));
        float ms = 0;
        CU(cudaEventElapsedTime(&ms, a, b));
        sampler.add(static_cast<double>(ms) * 1e-3);
      } while (!sampler.done(seconds_since(t0)));
      cudaEventDestroy(a);
      cudaEventDestroy(b);
      const double t = sampler.summary().median;
      P2pRow row;
      row.src = s;
      row.dst = d;
      row.peer_access = can != 0;
      row.bytes = bytes;
      row.time_us = t * 1e6;
      row.gbps = static_cast<double>(bytes) / t / 1e9;
      cal.measurements.p2p.push_back(row);
    }
  }
}

}  // namespace

Status run_collectives_main(Calibration& cal, Mode mode, const Launch& launch, int visible_devices,
                            const volatile std::sig_atomic_t* cancel) {
  try {
    World w(launch, visible_devices);
    int nccl_version = 0;
    ncclGetVersion(&nccl_version);
    const std::uint64_t free_b = w.min_free_bytes();
    CollectivePlan plan = make_collective_plan(mode, free_b / 2);  // half of the free memory at most
    w.alloc(plan.sizes.back());
    cal.meta.notes.push_back(
        "collectives: NCCL " + std::to_string(nccl_version) + ", " + std::to_string(w.nranks()) + " ranks (" +
        (launch.world_size > 1 ? launch.launcher + ", one GPU per rank"
                               : std::string("one process, ncclCommInitAll")) +
        "), float32 elements, sum, out-of-place buffers; times are the mean per operation over batches of " +
        std::to_string(plan.iters_per_sample) + ", median over batches");
    for (const std::string& op : plan.ops) {
      if (cancel && *cancel) break;
      const std::string bad = check_op(w, op);
      if (w.any(!bad.empty())) {
        cal.meta.notes.push_back("FAILED: collectives " + op + ": wrong result: " +
                                 (bad.empty() ? std::string("on another rank") : bad) + "; not recorded");
        log("FAILED: " + op + ": " + bad);
        continue;
      }
      for (std::uint64_t size : plan.sizes) {
        if (cancel && *cancel) break;
        auto c = collective_counts(op, size, w.nranks(), sizeof(float));
        if (!c) continue;
        for (int i = 0; i < plan.timing.warmup; ++i) enqueue(w, op, *c);
        sync_all(w);
        Sampler sampler(plan.timing);
        const auto t0 = std::chrono::steady_clock::now();
        bool stop = false;
        do {
          const auto b0 = std::chrono::steady_clock::now();
          for (int i = 0; i < plan.iters_per_sample; ++i) enqueue(w, op, *c);
          sync_all(w);
          sampler.add(w.mean_over_ranks(seconds_since(b0) / plan.iters_per_sample));
          stop = w.any(sampler.done(seconds_since(t0)));  // every rank runs the same number of batches
        } while (!stop);
        if (w.root())
          cal.measurements.collectives.push_back(
              collective_row(op, w.nranks(), c->bytes, sampler.summary().median));
      }
      if (w.root()) log("collectives: " + op + " done");
    }
    if (launch.world_size <= 1 && w.ranks().size() >= 2) {
      p2p_matrix(w, cal, plan.p2p_bytes, plan.timing);
    } else {
      cal.meta.notes.push_back("p2p: not measured under mpirun (one GPU per process)");
    }
  } catch (const Failure& e) {
    cal.meta.notes.push_back(std::string("stopped: collectives: ") + e.what());
    return make_error(Errc::internal, "--collectives", e.what());
  }
  return Ok{};
}

}  // namespace ftcost::calib
