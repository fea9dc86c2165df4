// A value the report may lack, as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace dlreset::watch {

/// The value, or null where there is none: how the report says "not known".
template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

}  // namespace dlreset::watch
