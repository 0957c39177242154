// NCCL's algorithm and protocol choice for one collective, as NVIDIA/nccl @ 5067397c computes it:
// src/graph/tuning.cc ncclTopoTuneModel (per collective, algorithm and protocol: a latency and a bandwidth
// from its tables) and ncclTopoGetAlgoTime (time = latency + bytes / (1000 x bandwidth) us; the tree's
// correction factors; the ring's multi-node plateau); src/enqueue.cc then takes the fastest enabled pair.
// The topology search's output (src/graph/search.cc: channels x per-channel bandwidth) is ftcost's link
// model: the intra-node link's bus bandwidth, and across nodes the lesser of it and the node's NICs.
// Provenance and the hand-counted examples: docs/sources/parallel.md "NCCL's algorithm choice".
#include "ftcost/parallel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace ftcost {

namespace {

// Indices of tuning.cc's tables.
enum Algo { kTree = 0, kRing = 1, kNvls = 2, kPat = 3, kAlgos = 4 };
enum Proto { kLL = 0, kLL128 = 1, kSimple = 2, kProtos = 3 };
enum Hw { kNvlink = 0, kPci = 1, kNet = 2 };
using Row3 = std::array<double, 3>;

// code: tuning.cc ncclTunerConstantsDefaults.baseLatencies (us; LL, LL128, Simple): Tree, Ring, NVLS, PAT.
constexpr std::array<Row3, kAlgos> kBaseLat = {
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {8.0, 8.0, 8.0}}};
// code: tuning.cc hwLatencies [NVLINK, PCI, NET][Tree, Ring, NVLS, PAT] (us; LL, LL128, Simple).
constexpr std::array<std::array<Row3, kAlgos>, 3> kHwLat = {{
    {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}, {0, 0, 4.0}}},
    {{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 4.0}}},
    {{{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 14}}},
}};
// code: tuning.cc llMaxBws [Volta, Ampere, Hopper, Blackwell on one node; row 0 (Intel host) across nodes]
// [1 node, 2 nodes, more]; perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws [arch][nodes];
// nvlsEfficiency [arch].
constexpr std::array<Row3, 4> kLlMaxBw = {
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}}};
constexpr std::array<double, 4> kRingLL128PerCh = {20.0, 20.0, 36.7, 40.0};
constexpr std::array<Row3, 4> kTreeLL128PerCh = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
constexpr std::array<Row3, 4> kTreePerCh = {
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
constexpr std::array<double, 4> kNvlsEfficiency = {0.0, 0.0, 0.85, 0.74};
// code: tuning.cc treeCorrectionFactor [protocol][log2(bytes / 64)], all-reduce's tree only.
constexpr std::array<std::array<double, 24>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};
// code: search.cc speedArrayIntra / sm90SpeedArrayIntra / sm100SpeedArrayIntra [0] and speedArrayInter [0]:
// the fastest per-channel bandwidth the search tries. assumed: the search fills the link with channels of
// that speed (channels = link bandwidth / it, at least 2); only the per-channel caps above use the count.
constexpr std::array<double, 4> kTopSpeedIntra = {40.0, 40.0, 60.0, 90.0};
constexpr double kTopSpeedInter = 48.0;
// code: tuning.cc getNetOverhead (1 us on an Intel x86 host, 2 on AMD; x3 for Simple). assumed: Intel.
constexpr double kNetOverheadUs = 1.0;
const char* const kAlgoName[kAlgos] = {"tree", "ring", "nvls", "pat"};
const char* const kProtoName[kProtos] = {"LL", "LL128", "Simple"};

// The communicator as tuning.cc sees it.
struct Comm {
  CollOp op;
  int ranks, nodes, arch, idx2;  // idx2: tuning.cc index2 (1 node, 2 nodes, more)
  double ppn, bw, channels;      // bw: the graph's bus bandwidth (channels x per-channel), GB/s
  bool nvlink, nvswitch, network_bound;
};

// nsteps of tuning.cc: all-reduce 2 (n - 1), all-gather and reduce-scatter n - 1.
double nsteps(const Comm& c) { return c.op == CollOp::all_reduce ? 2.0 * (c.ranks - 1) : c.ranks - 1.0; }

bool enabled(const Comm& c, int a, int p) {
  const bool ar = c.op == CollOp::all_reduce;
  if (a == kTree) return ar && (p != kLL128 || c.nvlink);
  if (a == kPat) return !ar && p == kSimple && c.ppn == 1 && c.nodes > 1;
  // NVLS: Simple only, NVSwitch with multicast (Hopper and later), one node (NVLS across nodes needs
  // CollNet, off by default), at least 2 channels; all-gather / reduce-scatter up to NCCL_MAX_NVLS_ARITY 32.
  if (a == kNvls)
    return p == kSimple && c.nvswitch && kNvlsEfficiency[static_cast<std::size_t>(c.arch)] > 0 &&
           c.nodes == 1 && c.channels >= 2 && (ar || c.ranks <= 32);
  // LL128 on NVLink paths only (tuning.cc: typeIntra <= PATH_NVB).
  return p != kLL128 || c.nvlink;
}

// The algorithm bandwidth of (a, p), GB/s (tuning.cc "Various model refinements", then bus -> algorithm bw).
double algo_bw(const Comm& c, int a, int p) {
  const auto arch = static_cast<std::size_t>(c.arch);
  const auto i2 = static_cast<std::size_t>(c.idx2);
  const double ll_max = kLlMaxBw[c.nodes == 1 ? arch : 0][i2];
  double bus = c.bw;
  if (a == kNvls) {
    double per = c.bw / c.channels * kNvlsEfficiency[arch] * (c.channels - 1) / c.channels;
    per *= c.op == CollOp::all_reduce ? 2.0 : (c.ppn - 1) / c.ppn;
    bus = c.channels * per;
  }
  if (a == kRing && p == kLL) bus = std::min(ll_max, bus * .5);
  if (a == kRing && p == kLL128) bus = std::min(bus * 0.92, c.channels * kRingLL128PerCh[arch]);
  if (a == kTree) bus = std::min(bus * .92, c.channels * kTreePerCh[arch][i2]);
  if (a == kTree && p == kLL) bus = std::min(bus / 3.8, ll_max);
  if (a == kTree && p == kLL128)
    bus = std::min(bus * (c.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), c.channels * kTreeLL128PerCh[arch][i2]);
  if (a == kPat) bus *= .75;
  const bool ag_rs = c.op != CollOp::all_reduce;
  if (a != kRing && ag_rs) return bus;  // no conversion for non-ring all-gather / reduce-scatter
  return a == kTree ? bus * .5 : bus * c.ranks / nsteps(c);
}

// The latency of (a, p), us (tuning.cc: base + per-step hardware latencies).
double algo_lat(const Comm& c, int a, int p) {
  const auto ap = static_cast<std::size_t>(a);
  const auto pp = static_cast<std::size_t>(p);
  const std::size_t intra_hw = c.nvlink ? kNvlink : kPci;
  double intra = kHwLat[intra_hw][ap][pp];
  const double inter =
      kHwLat[kNet][c.ppn == 1 ? std::size_t{kTree} : ap][pp];  // graph latencyInter: 0 (assumed)
  const double log_nodes = std::floor(std::log2(std::max(1, c.nodes)));
  if (a == kNvls) return intra;
  if (a == kTree) return kBaseLat[ap][pp] + 2 * ((c.ppn - 1) * intra + log_nodes * inter);
  if (a == kPat) return kBaseLat[ap][pp] + log_nodes * (inter / 3.5) + c.ranks * 2.8;
  if (c.nodes > 1) intra = std::max(intra, kNetOverheadUs * (p == kSimple ? 3 : 1));
  const double inter_steps = c.nodes == 1                 ? 0
                             : c.op == CollOp::all_reduce ? 2.0 * (c.nodes - 1)
                                                          : c.nodes - 1;
  return kBaseLat[ap][pp] + (nsteps(c) - inter_steps) * intra + inter_steps * inter;
}

// ncclTopoGetAlgoTime for one call of `bytes` (NCCL's nBytes: the full buffer for all-gather and
// reduce-scatter, enqueue.h ncclFuncMaxSendRecvCount), seconds; infinity when (a, p) is not enabled.
double algo_time(const Comm& c, int a, int p, double bytes) {
  if (!enabled(c, a, p)) return std::numeric_limits<double>::infinity();
  double bw = algo_bw(c, a, p);
  double lat = algo_lat(c, a, p);
  if (bw <= 0) return std::numeric_limits<double>::infinity();
  const double scaled = std::floor(bytes / 64);
  const int log_size = scaled >= 1 ? static_cast<int>(std::floor(std::log2(scaled))) : -1;
  if (a == kTree && log_size >= 0 && log_size < 23)
    bw *= kTreeCorrection[static_cast<std::size_t>(p)][static_cast<std::size_t>(log_size)];
  if (a == kRing && p == kSimple && c.nodes > 1 && c.op == CollOp::all_reduce &&
      bytes / (c.channels * c.ranks) >= 64)
    lat *= c.arch >= 1 ? 1.4 : 1.9;  // "Plateau effect of ring"
  return (lat + bytes / (1000.0 * bw)) * 1e-6;
}

Comm make_comm(CollOp op, int gpn, int nodes, const ParallelPlan& p) {
  Comm c{op,
         gpn * nodes,
         nodes,
         std::clamp(p.nccl_arch, 0, 3),
         nodes <= 2 ? nodes - 1 : 2,
         static_cast<double>(gpn),
         p.intra.busbw_gbps,
         2,
         false,
         false,
         false};
  const bool nvl = p.intra.kind == LinkKind::nvswitch || p.intra.kind == LinkKind::nvlink_bridge;
  c.nvlink = gpn > 1 && nvl;
  c.nvswitch = gpn > 1 && p.intra.kind == LinkKind::nvswitch;
  if (gpn <= 1) c.bw = p.inter.busbw_gbps;
  if (nodes > 1 && gpn > 1) {
    const double nics = p.inter.busbw_gbps * gpn;  // the node's NICs, shared by its GPUs
    c.network_bound = nics < c.bw;
    c.bw = std::min(c.bw, nics);
  }
  if (gpn <= 1) c.network_bound = true;
  const double top = nodes > 1 ? kTopSpeedInter : kTopSpeedIntra[static_cast<std::size_t>(c.arch)];
  c.channels = std::max(2.0, std::ceil(c.bw / top));
  return c;
}

}  // namespace

NcclTime nccl_time(CollOp op, double bytes, int gpus_per_node, int nodes, const ParallelPlan& p) {
  NcclTime out;
  if (gpus_per_node * nodes <= 1 || bytes <= 0) return out;
  const Comm c = make_comm(op, gpus_per_node, nodes, p);
  if (c.bw <= 0) return out;
  out.time_s = std::numeric_limits<double>::infinity();
  for (int a = 0; a < kAlgos; ++a)
    for (int pr = 0; pr < kProtos; ++pr) {
      const double t = algo_time(c, a, pr, bytes);
      if (t < out.time_s) {
        out.time_s = t;
        out.algorithm = kAlgoName[a];
        out.protocol = kProtoName[pr];
      }
    }
  out.network_bound = c.network_bound && nodes > 1;
  out.busbw_gbps = c.bw;
  return out;
}

std::string nccl_label(const NcclTime& t) {
  if (t.time_s <= 0) return "";
  return std::string(t.algorithm) + "/" + t.protocol + (t.network_bound ? ", network-bound" : "");
}

}  // namespace ftcost
