#include "harness/data/core/datasets/dataset_registry.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <stdexcept>

#include "harness/data/core/errors.h"

namespace dlreset::data {

namespace {

/// "'a', 'b' and 'c'".
std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " and " : ", ";
    text += "'" + names[i] + "'";
  }
  return text.empty() ? "none" : text;
}

}  // namespace

DatasetRegistry& DatasetRegistry::global() {
  static DatasetRegistry registry;
  return registry;
}

void DatasetRegistry::add(const std::string& kind, Factory factory) {
  if (kind.empty()) {
    throw std::logic_error("A dataset kind must not be empty: give DLRESET_REGISTER_DATASET the "
                           "\"kind\" that the dataset's spec() writes.");
  }
  if (!factories_.emplace(kind, factory).second) {
    throw std::logic_error("The dataset kind '" + kind +
                           "' is registered twice; give one of "
                           "the two datasets another kind, in its spec() and its registration.");
  }
}

std::unique_ptr<Dataset> DatasetRegistry::make(const std::string& text) const {
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DatasetError(std::string("A dataset spec is not valid JSON (") + e.what() + "): " + text);
  }
  const bool named = spec.is_object() && spec.contains("kind") && spec["kind"].is_string();
  const std::string kind = named ? spec["kind"].get<std::string>() : "";
  const auto found = factories_.find(kind);
  if (found == factories_.end()) {
    throw DatasetError("Unknown dataset kind '" + kind + "' in a dataset spec; this program knows " +
                       quoted_list(kinds()) +
                       ". A dataset used with start_method 'spawn' must "
                       "register its kind with DLRESET_REGISTER_DATASET (harness/data/"
                       "dataset_registry.h) in a file linked into the program.");
  }
  return found->second(text);
}

std::vector<std::string> DatasetRegistry::kinds() const {
  std::vector<std::string> names;
  for (const auto& [kind, factory] : factories_) names.push_back(kind);
  return names;
}

}  // namespace dlreset::data
