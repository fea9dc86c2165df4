#include "watch/hook/hook_event.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace dlreset::watch {

namespace {

struct KindName {
  HookEventKind kind;
  const char* name;
};

constexpr KindName kKindNames[] = {
    {HookEventKind::hello, "hello"},
    {HookEventKind::patched, "patched"},
    {HookEventKind::unseen, "unseen"},
    {HookEventKind::hook_error, "hook_error"},
    {HookEventKind::loader_made, "loader_made"},
    {HookEventKind::iterator_made, "iterator_made"},
    {HookEventKind::iterator_reset, "iterator_reset"},
    {HookEventKind::iterator_dropped, "iterator_dropped"},
    {HookEventKind::workers_shutdown, "workers_shutdown"},
    {HookEventKind::set_epoch, "set_epoch"},
    {HookEventKind::pass_waits, "pass_waits"},
    {HookEventKind::worker_ready, "worker_ready"},
    {HookEventKind::pass_begun, "pass_begun"},
    {HookEventKind::pass_beat, "pass_beat"},
};

std::string text(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

template <typename Integer>
std::optional<Integer> integer(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number_integer()) return std::nullopt;
  return static_cast<Integer>(found->get<long long>());
}

bool flag(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_boolean() && found->get<bool>();
}

/// RANK and LOCAL_RANK come as the environment has them: text, or null.
std::optional<int> rank_text(const nlohmann::json& object, const char* key) {
  const std::string value = text(object, key);
  if (value.empty()) return std::nullopt;
  char* end = nullptr;
  const long parsed = std::strtol(value.c_str(), &end, 10);
  if (*end != '\0' || parsed < 0 || parsed > 1 << 20) return std::nullopt;
  return static_cast<int>(parsed);
}

std::optional<double> number(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) return std::nullopt;
  const double value = found->get<double>();
  return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

/// A pass's head-of-line blocking; false where its fields are there but out of range.
bool read_blocked(const nlohmann::json& object, PassWaits& waits) {
  waits.blocked_waits = integer<long>(object, "blocked_waits").value_or(0);
  waits.blocked_wait_s = number(object, "blocked_wait_s").value_or(0.0);
  if (waits.blocked_waits < 0 || waits.blocked_wait_s < 0.0) return false;
  const auto worst = object.find("worst_blocked");
  if (worst == object.end() || worst->is_null()) return waits.blocked_waits == 0;
  if (!worst->is_object()) return false;
  BlockedWait blocked;
  const std::optional<long> batch = integer<long>(*worst, "batch");
  const std::optional<double> wait = number(*worst, "wait_s");
  const std::optional<long> ready = integer<long>(*worst, "ready");
  if (!batch || !wait || !ready || *batch < 1 || *wait < 0.0 || *ready < 1 || waits.blocked_waits < 1) return false;
  blocked.batch = *batch;
  blocked.wait_s = *wait;
  blocked.ready = *ready;
  blocked.worker = integer<int>(*worst, "worker");
  if (blocked.worker && *blocked.worker < 0) return false;
  waits.worst_blocked = blocked;
  return true;
}

/// A pass_waits event's fields; false where one the accounting needs is missing or out of range.
bool read_waits(const nlohmann::json& object, PassWaits& waits) {
  const std::optional<long> pass = integer<long>(object, "pass");
  const std::optional<long> batches = integer<long>(object, "batches");
  const std::optional<double> begun = number(object, "begun");
  const std::optional<double> wait = number(object, "wait_s");
  const std::optional<double> step = number(object, "step_s");
  if (!pass || !batches || !begun || !wait || !step || *pass < 1 || *batches < 0 || *wait < 0 || *step < 0) {
    return false;
  }
  waits.pass = *pass;
  waits.batches = *batches;
  waits.begun_s = *begun;
  waits.wait_s = *wait;
  waits.step_s = *step;
  waits.thread = text(object, "thread");
  const auto main_thread = object.find("main_thread");
  waits.main_thread = main_thread == object.end() || !main_thread->is_boolean() || main_thread->get<bool>();
  waits.other_thread_calls = integer<long>(object, "other_thread_calls").value_or(0);
  waits.first_batch_s = number(object, "first_batch_s");
  waits.first_wait_s = number(object, "first_wait_s");
  waits.last_batch_s = number(object, "last_batch");
  waits.max_wait_s = number(object, "max_wait_s");
  if (const auto hist = object.find("hist"); hist != object.end() && hist->is_array()) {
    for (const auto& bucket : *hist) {
      if (!bucket.is_array() || bucket.size() != 2 || !bucket[0].is_number_integer() ||
          !bucket[1].is_number_integer()) {
        return false;
      }
      const int index = bucket[0].get<int>();
      const long count = bucket[1].get<long>();
      if (index < 0 || index > 40 || count < 0) return false;
      waits.hist.emplace_back(index, count);
    }
  }
  waits.end = text(object, "end");
  waits.stopped = flag(object, "stopped");
  return read_blocked(object, waits);
}

std::vector<std::string> texts(const nlohmann::json& object, const char* key) {
  std::vector<std::string> values;
  const auto found = object.find(key);
  if (found == object.end() || !found->is_array()) return values;
  for (const auto& item : *found) {
    if (item.is_string()) values.push_back(item.get<std::string>());
  }
  return values;
}

}  // namespace

const char* to_string(HookEventKind kind) {
  for (const KindName& entry : kKindNames) {
    if (entry.kind == kind) return entry.name;
  }
  return "unknown";
}

std::optional<HookEvent> parse_hook_event(std::string_view datagram, double received_s) {
  const nlohmann::json object = nlohmann::json::parse(datagram, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return std::nullopt;
  const std::optional<pid_t> pid = integer<pid_t>(object, "pid");
  const std::string kind = text(object, "kind");
  if (!pid || kind.empty()) return std::nullopt;
  HookEvent event;
  for (const KindName& entry : kKindNames) {
    if (kind == entry.name) event.kind = entry.kind;
  }
  event.pid = *pid;
  const auto time = object.find("t");
  event.time_s = time != object.end() && time->is_number() ? time->get<double>() : received_s;
  event.rank = rank_text(object, "rank");
  event.local_rank = rank_text(object, "local_rank");
  event.sequence = integer<long>(object, "seq").value_or(0);
  event.lost_before = integer<long>(object, "lost").value_or(0);

  event.loader = text(object, "loader");
  event.loader_class = text(object, "loader_class");
  event.settings.dataset = text(object, "dataset");
  event.settings.batch_size = integer<int>(object, "batch_size");
  event.settings.workers = integer<int>(object, "workers");
  event.settings.persistent = flag(object, "persistent");
  event.settings.start_method = text(object, "start_method");

  event.iterator = text(object, "iterator");
  if (const auto pids = object.find("worker_pids"); pids != object.end() && pids->is_array()) {
    for (const auto& item : *pids) {
      if (item.is_number_integer()) event.worker_pids.push_back(item.get<pid_t>());
    }
  }
  event.yielded = integer<long>(object, "yielded");
  event.in_flight = integer<long>(object, "in_flight");
  event.ready = integer<long>(object, "ready");
  event.shut_down = flag(object, "shut_down");
  event.threads = texts(object, "threads");
  event.how = text(object, "how");
  event.caller = text(object, "caller");

  event.sampler = text(object, "sampler");
  event.sampler_class = text(object, "sampler_class");
  event.sampler_epoch = integer<long>(object, "sampler_epoch");
  event.epoch = integer<long>(object, "epoch");
  event.previous_epoch = integer<long>(object, "previous");
  event.pending_iterator = text(object, "pending_iterator");
  event.pending_epoch = integer<long>(object, "pending_epoch");

  if (const auto stack = object.find("stack"); stack != object.end() && stack->is_array()) {
    for (const auto& frame : *stack) {
      if (!frame.is_array() || frame.size() < 3 || !frame[0].is_string() || !frame[1].is_number_integer() ||
          !frame[2].is_string()) {
        continue;
      }
      event.stack.push_back({frame[0].get<std::string>(), frame[1].get<int>(), frame[2].get<std::string>(),
                             frame.size() > 3 && frame[3].is_string() ? frame[3].get<std::string>() : ""});
    }
  }
  event.frames_omitted = integer<int>(object, "frames_omitted").value_or(0);

  if (event.kind == HookEventKind::pass_waits && (event.iterator.empty() || !read_waits(object, event.waits))) {
    return std::nullopt;
  }
  if (event.kind == HookEventKind::pass_begun || event.kind == HookEventKind::pass_beat) {
    event.waits.pass = integer<long>(object, "pass").value_or(0);
    event.waits.batches = integer<long>(object, "batches").value_or(0);
  }
  event.worker_id = integer<int>(object, "worker_id");

  event.parent = integer<pid_t>(object, event.kind == HookEventKind::worker_ready ? "parent" : "ppid").value_or(0);
  event.argv = texts(object, "argv");
  event.executable = text(object, "executable");
  event.python_version = text(object, "python");
  event.hidden_sitecustomize = text(object, "hidden_sitecustomize");
  event.torch_version = text(object, "torch");
  event.seen = texts(object, "seen");
  event.unseen = texts(object, "unseen");
  event.what = text(object, "what");
  event.reason = text(object, "reason");
  event.where = text(object, "where");
  event.error = text(object, "error");
  return event;
}

std::string format_traceback(const std::string& heading, const std::vector<StackFrame>& stack, int frames_omitted,
                             const std::string& indent) {
  std::string out = indent + "Traceback (most recent call last), " + heading + ":\n";
  if (frames_omitted > 0) out += fmt::format("{}  [{} outer frames left out]\n", indent, frames_omitted);
  for (const StackFrame& frame : stack) {
    out += fmt::format("{}  File \"{}\", line {}, in {}\n", indent, frame.file, frame.line, frame.function);
    if (!frame.code.empty()) out += fmt::format("{}    {}\n", indent, frame.code);
  }
  return out;
}

}  // namespace dlreset::watch
