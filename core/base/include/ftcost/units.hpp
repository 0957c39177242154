// Units, defined once (binary sizes as PyTorch's memory statistics and nvidia-smi's MiB report them).
#pragma once

namespace ftcost {
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;
}  // namespace ftcost
