// The collectives of torch.distributed (torch/distributed/distributed_c10d.py @ v1.13.1) that a
// DDP-style loop needs, on c10d's Gloo process group.
#include "harness/distributed/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <c10/util/Exception.h>
#include <glog/logging.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace dlreset::distributed {

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
};

namespace {

/// "60 s", "2.5 s": the timeout as its owner gave it.
std::string seconds(std::chrono::milliseconds timeout) {
  if (timeout.count() % 1000 == 0) return std::to_string(timeout.count() / 1000) + " s";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", static_cast<double>(timeout.count()) / 1000.0);
  return text;
}

/// The error's first line, without the C++ backtrace c10 appends to its own.
std::string first_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  return text.substr(0, text.find('\n'));
}

/// The store's count of the ranks other than 0 that have connected, which rank 0 can read
/// (c10d's own count is private to its TCPStore).
constexpr const char* kJoinedKey = "dlreset/ranks_joined";
/// How often rank 0 reads kJoinedKey while a WhileWaiting watches for deaths.
constexpr std::chrono::milliseconds kJoinCheckInterval{10};

}  // namespace

ProcessGroup::ProcessGroup(const Rendezvous& rendezvous, const OnListening& on_listening,
                           const WhileWaiting& while_waiting)
    : rendezvous_(rendezvous), impl_(std::make_unique<Impl>()) {
  check_rendezvous(rendezvous_);
  // c10d reports each failed bind, connect retry and timeout through glog on stderr, several
  // lines at a time; the DistErrors here say the same in one sentence that names the fix. Only
  // fatal messages pass, for the whole process: the one setting of glog's that dlreset makes.
  FLAGS_minloglevel = google::GLOG_FATAL;
  const std::string where = rendezvous_.master_addr + ":" + std::to_string(rendezvous_.master_port);
  c10d::TCPStoreOptions store;
  store.port = static_cast<std::uint16_t>(rendezvous_.master_port);
  store.isServer = rendezvous_.rank == 0;
  store.numWorkers = static_cast<std::size_t>(rendezvous_.world_size);
  // Every other rank checks in as it connects, in c10d's count (waitWorkers) and in kJoinedKey;
  // rank 0 waits for them once whoever starts them has its port.
  store.waitWorkers = rendezvous_.rank != 0;
  store.timeout = rendezvous_.timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(rendezvous_.master_addr, store);
  } catch (const std::exception& e) {
    if (rendezvous_.rank == 0) {
      // c10d::SocketError: the one way rank 0's store fails before it waits for anyone.
      throw DistError("Rank 0 could not serve the job's store on " + where + " (" + first_line(e) +
                      "): the port is in use; give another MASTER_PORT, or wait for the job that "
                      "holds it to end.");
    }
    throw DistError("Rank " + std::to_string(rendezvous_.rank) + " could not join the job's store on " + where +
                    " within " + seconds(rendezvous_.timeout) + " (" + first_line(e) +
                    "); start rank 0 with the same MASTER_ADDR and MASTER_PORT, or raise the timeout.");
  }
  if (rendezvous_.rank == 0) {
    if (on_listening) on_listening(impl_->store->getPort());
    const auto gave_up = [&](const std::string& why) {
      return DistError("Rank 0 of " + std::to_string(rendezvous_.world_size) + " gave up after " +
                       seconds(rendezvous_.timeout) + " waiting for the other ranks to reach its store on " +
                       rendezvous_.master_addr + ":" + std::to_string(impl_->store->getPort()) + " (" + why +
                       "); start every rank with the same WORLD_SIZE, MASTER_ADDR and MASTER_PORT, or raise "
                       "the timeout.");
    };
    const auto started = std::chrono::steady_clock::now();
    try {
      if (while_waiting) {
        // c10d's waitForWorkers() cannot be cut short: with someone to ask, read the count of
        // the ranks that joined instead, and let `while_waiting` spend the time between reads
        // watching for a death.
        while (impl_->store->add(kJoinedKey, 0) < rendezvous_.world_size - 1) {
          if (std::chrono::steady_clock::now() - started >= rendezvous_.timeout) throw gave_up("timed out");
          while_waiting(kJoinCheckInterval);
        }
      } else {
        impl_->store->waitForWorkers();
        // c10d's wait ends quietly at the timeout, whoever came; the group would then wait a
        // second timeout for the same ranks.
        if (std::chrono::steady_clock::now() - started >= rendezvous_.timeout) throw gave_up("timed out");
      }
    } catch (const DistError&) {
      throw;
    } catch (const std::exception& e) {
      throw gave_up(first_line(e));
    }
  } else {
    impl_->store->add(kJoinedKey, 1);
  }
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->timeout = rendezvous_.timeout;
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(rendezvous_.master_addr));
  try {
    impl_->group =
        c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, rendezvous_.rank, rendezvous_.world_size, options);
  } catch (const std::exception& e) {
    throw DistError("Rank " + std::to_string(rendezvous_.rank) + " of " + std::to_string(rendezvous_.world_size) +
                    " gave up after " + seconds(rendezvous_.timeout) + " waiting for the other ranks to join at " +
                    where + " (" + first_line(e) +
                    "); start every rank with the same WORLD_SIZE, MASTER_ADDR "
                    "and MASTER_PORT, or raise the timeout.");
  }
}

ProcessGroup::~ProcessGroup() = default;

DistError ProcessGroup::collective_failed(const std::string& what, const std::exception& e,
                                          std::chrono::steady_clock::time_point started) const {
  // Gloo fails at once when a peer's socket closes, and only after the timeout when the peer is
  // alive but never comes: the message says which of the two happened.
  const bool timed_out = std::chrono::steady_clock::now() - started >= rendezvous_.timeout;
  const std::string how = timed_out ? " timed out after " + seconds(rendezvous_.timeout) : " failed";
  return DistError("Rank " + std::to_string(rendezvous_.rank) + " of " + std::to_string(rendezvous_.world_size) + ": " +
                       what + how + " (" + first_line(e) +
                       "). Another rank has probably died or stopped; its own error says why.",
                   timed_out ? DistError::Cause::timed_out : DistError::Cause::peer_closed);
}

void ProcessGroup::all_reduce_sum(std::vector<at::Tensor>& tensors) {
  const auto started = std::chrono::steady_clock::now();
  try {
    impl_->group->allreduce(tensors)->wait(rendezvous_.timeout);
  } catch (const std::exception& e) {
    throw collective_failed("an all-reduce", e, started);
  }
}

void ProcessGroup::all_reduce_mean(std::vector<at::Tensor>& tensors) {
  all_reduce_sum(tensors);
  for (at::Tensor& tensor : tensors) tensor.div_(rendezvous_.world_size);
}

void ProcessGroup::barrier() {
  const auto started = std::chrono::steady_clock::now();
  try {
    impl_->group->barrier()->wait(rendezvous_.timeout);
  } catch (const std::exception& e) {
    throw collective_failed("a barrier", e, started);
  }
}

std::vector<std::string> ProcessGroup::gather_object(const std::string& object) {
  const auto started = std::chrono::steady_clock::now();
  const std::string prefix = "dlreset/gather/" + std::to_string(gathers_++) + "/";
  std::vector<std::string> objects;
  try {
    impl_->store->set(prefix + std::to_string(rendezvous_.rank),
                      std::vector<std::uint8_t>(object.begin(), object.end()));
    if (rendezvous_.rank != 0) return objects;
    for (int rank = 0; rank < rendezvous_.world_size; ++rank) {
      const std::vector<std::uint8_t> bytes = impl_->store->get(prefix + std::to_string(rank));
      objects.emplace_back(bytes.begin(), bytes.end());
    }
  } catch (const std::exception& e) {
    throw collective_failed("a gather", e, started);
  }
  return objects;
}

}  // namespace dlreset::distributed
