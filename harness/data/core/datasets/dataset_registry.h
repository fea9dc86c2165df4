// Which kinds of dataset a spawned worker can rebuild from a spec: dlreset's own and any that a
// program registers. A spawned worker is a fresh run of the program, so, like Python unpickling
// a dataset, it needs the code of the dataset's kind, found here by name.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/data/core/datasets/dataset.h"

namespace dlreset::data {

/// Dataset factories by kind, the "kind" field of `Dataset::spec()`.
///
/// One of the five pieces of process-wide mutable state (docs/design.md §4): it is filled by
/// DLRESET_REGISTER_DATASET before main() and before a spawned worker rebuilds its dataset,
/// and only read after that, so it needs no lock.
class DatasetRegistry {
 public:
  /// Rebuilds a dataset from the JSON its `spec()` wrote.
  using Factory = std::unique_ptr<Dataset> (*)(const std::string& spec);

  static DatasetRegistry& global();

  /// Throws std::logic_error when `kind` is empty or already registered: two datasets under one
  /// name would rebuild as whichever registered last.
  void add(const std::string& kind, Factory factory);
  /// Throws DatasetError for a spec `text` that is not JSON or names no registered kind.
  std::unique_ptr<Dataset> make(const std::string& text) const;
  /// The registered kinds, sorted: those of the datasets whose code the program links. A
  /// built-in kind that the program never uses (a probe dataset, say) may be missing, since the
  /// linker leaves its object file out; the program could not have made one to spawn anyway.
  std::vector<std::string> kinds() const;

 private:
  std::map<std::string, Factory> factories_;
};

namespace detail {
/// Registers from a constructor of priority 1000, which runs before every static object of the
/// program and before the spawned-worker entry (an unprioritised constructor) looks a kind up.
template <typename T>
void register_dataset(const char* kind) {
  DatasetRegistry::global().add(kind,
                                [](const std::string& spec) -> std::unique_ptr<Dataset> { return T::from_spec(spec); });
}
}  // namespace detail

}  // namespace dlreset::data

#define DLRESET_DATASET_CONCAT_INNER(a, b) a##b
#define DLRESET_DATASET_CONCAT(a, b) DLRESET_DATASET_CONCAT_INNER(a, b)

/// Registers dataset type `Type` under `kind`, the "kind" its `spec()` writes; `Type` has
/// `static std::unique_ptr<Type> from_spec(const std::string& spec)`. Put it at namespace scope
/// in the .cpp file of the dataset, which must be linked into the program: an object file of a
/// static library that nothing else uses is left out, and its registration with it.
#define DLRESET_REGISTER_DATASET(kind, Type)                                                                     \
  __attribute__((constructor(1000))) static void DLRESET_DATASET_CONCAT(dlreset_register_dataset_, __LINE__)() { \
    ::dlreset::data::detail::register_dataset<Type>(kind);                                                       \
  }
