// Preloaded into memcheck runs on CPUs whose CPUID hides RDTSCP (ci/valgrind.sh says when).
//
// LibTorch pulls in Debian's libhwy (through libjxl), whose load-time initializer measures its
// timer with RDTSCP. Valgrind 3.19's own CPUID reports RDTSCP, so libhwy uses it, but valgrind
// decodes RDTSCP only when the host advertises it: on a virtual machine that hides the bit the
// process dies with SIGILL before main. dlreset never uses libhwy's timer, so this definition
// stands in for that one call; it is interposed through libhwy's PLT.
#include <cstdint>

namespace hwy::platform {

/// The smallest tick difference libhwy's benchmarks would trust; 1 tick is what it reports on a
/// fine-grained timer.
std::uint64_t TimerResolution();
std::uint64_t TimerResolution() { return 1; }

}  // namespace hwy::platform
