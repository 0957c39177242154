// Functions shared by the CUDA kernels and their CPU references (compiled by nvcc and by g++):
// the deterministic input generator and float <-> bf16/fp16 bit conversions.
//
// Inputs are generated from a hash of (seed, element index), never copied between host and device:
// a CPU reference recomputes any input element from its index, so a kernel's output can be checked
// against an independent computation without moving gigabytes. Values are q * scale with q an integer
// in [-levels, levels] and scale a power of two, so that they are exact in bf16/fp16/tf32 (levels <= 127)
// and fp8 e4m3 (levels <= 15): GEMM products are then exact and only accumulation order differs.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FTCOST_HD __host__ __device__ __forceinline__
#else
#define FTCOST_HD inline
#endif

namespace ftcost::calib {

// splitmix64 finalizer of (seed, index).
FTCOST_HD std::uint32_t hash32(std::uint32_t seed, std::uint64_t i) {
  std::uint64_t z = i + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(seed) + 1u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<std::uint32_t>(z >> 32);
}

// q * scale, q uniform in [-levels, levels].
FTCOST_HD float hash_value(std::uint32_t seed, std::uint64_t i, int levels, float scale) {
  std::uint32_t span = static_cast<std::uint32_t>(2 * levels + 1);
  int q = static_cast<int>(hash32(seed, i) % span) - levels;
  return static_cast<float>(q) * scale;
}

// Uniform in [0, 1).
FTCOST_HD float hash_unit(std::uint32_t seed, std::uint64_t i) {
  return static_cast<float>(hash32(seed, i) >> 8) * (1.0f / 16777216.0f);
}

// ---- host-side number formats (the device uses cuda_bf16.h / cuda_fp16.h) ----

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// float -> bf16, round to nearest even (NaN stays NaN).
inline std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu))
    return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float bf16_bits_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }
inline float round_bf16(float f) { return bf16_bits_to_float(float_to_bf16_bits(f)); }

// float -> IEEE half, round to nearest even, overflow to inf, subnormals kept.
inline std::uint16_t float_to_half_bits(float f) {
  std::uint32_t u = float_bits(f);
  std::uint32_t sign = (u >> 16) & 0x8000u;
  std::uint32_t exp = (u >> 23) & 0xFFu;
  std::uint32_t man = u & 0x007FFFFFu;
  if (exp == 0xFFu) return static_cast<std::uint16_t>(sign | 0x7C00u | (man ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    man |= 0x00800000u;
    int shift = 14 - e;  // 1 - e + 13
    std::uint32_t half_man = man >> shift;
    std::uint32_t rem = man & ((1u << shift) - 1u);
    std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_man & 1u))) ++half_man;
    return static_cast<std::uint16_t>(sign | half_man);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (man >> 13);
  std::uint32_t rem = man & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(half);
}
inline float half_bits_to_float(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t man = h & 0x3FFu;
  if (exp == 0x1Fu) return bits_float(sign | 0x7F800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return bits_float(sign);
    float v = static_cast<float>(man) * (1.0f / 16777216.0f);  // man * 2^-24
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}
inline float round_half(float f) { return half_bits_to_float(float_to_half_bits(f)); }

}  // namespace ftcost::calib
