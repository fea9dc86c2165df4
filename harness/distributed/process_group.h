// The collectives of torch.distributed (torch/distributed/distributed_c10d.py @ v1.13.1) that a
// DDP-style loop needs, on c10d's Gloo process group.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/distributed/rendezvous.h"

namespace dlreset::distributed {

/// `init_process_group("gloo", ...)` with an env:// rendezvous: rank 0 serves a c10d TCPStore on
/// master_port and every rank joins it, then a Gloo process group forms over loopback (or
/// master_addr's interface). Every wait, the rendezvous's and each collective's, ends after
/// `rendezvous.timeout` with a DistError that says which rank gave up on what. Forming one
/// silences glog below FATAL in the process, since c10d's own log lines on stderr only repeat
/// what the DistError says.
class ProcessGroup {
 public:
  /// Called on rank 0 once its store listens and before it waits for the others, with the port
  /// it listens on: a launcher starts the other ranks there, so a port the kernel chose
  /// (master_port 0) reaches them.
  using OnListening = std::function<void(int port)>;
  /// Given on rank 0 by whoever started the other ranks: called between reads of how many have
  /// reached the store, it waits up to `interval` for one of them to die and throws if one has,
  /// so that a rank that died before joining ends the job now instead of at the timeout.
  /// Without it, rank 0 waits in c10d's own wait for the store's workers: no one could see a
  /// death.
  using WhileWaiting = std::function<void(std::chrono::milliseconds interval)>;

  /// Forms the group. Throws DistError when the port is in use (rank 0), when the store cannot
  /// be reached, or when the other ranks do not all join within the timeout.
  explicit ProcessGroup(const Rendezvous& rendezvous, const OnListening& on_listening = {},
                        const WhileWaiting& while_waiting = {});
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rendezvous_.rank; }
  int world_size() const { return rendezvous_.world_size; }

  /// `all_reduce(t, op=SUM)` on each tensor in place, then divided by the world size: the mean
  /// that keeps DDP's parameters equal on every rank.
  void all_reduce_mean(std::vector<at::Tensor>& tensors);
  /// `all_reduce(t, op=SUM)` in place.
  void all_reduce_sum(std::vector<at::Tensor>& tensors);
  /// `barrier()`
  void barrier();
  /// `gather_object(obj, dst=0)` for bytes: on rank 0, every rank's `object` in rank order;
  /// elsewhere, nothing. It goes through the store, so it needs no tensor and no equal sizes.
  std::vector<std::string> gather_object(const std::string& object);

 private:
  /// The error of a collective that threw: this rank, what it was doing, whether it timed out,
  /// c10d's first line.
  DistError collective_failed(const std::string& what, const std::exception& e,
                              std::chrono::steady_clock::time_point started) const;

  struct Impl;
  Rendezvous rendezvous_;
  std::unique_ptr<Impl> impl_;
  /// gather_object calls so far: each one's keys are its own.
  int gathers_ = 0;
};

}  // namespace dlreset::distributed
