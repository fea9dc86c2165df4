// A dataset's spec made of its options: their JSON, through the options' nlohmann to_json and
// from_json, with the kind that DatasetRegistry looks up. Not installed: a dataset of the
// program's own may write its spec any way it likes.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace dlreset::data::detail {

/// The spec of a dataset that its options rebuild whole. It is written from the options' own
/// field list (NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE), so a new option reaches a spawned worker as
/// soon as that list names it, with no second list here to forget.
template <typename Options>
std::string options_spec(const char* kind, const Options& options) {
  nlohmann::json spec = options;
  spec["kind"] = kind;
  return spec.dump();
}

/// The options back from a spec that options_spec wrote; the "kind" field is not theirs and is
/// passed over.
template <typename Options>
Options options_from_spec(const std::string& text) {
  return nlohmann::json::parse(text).get<Options>();
}

}  // namespace dlreset::data::detail
