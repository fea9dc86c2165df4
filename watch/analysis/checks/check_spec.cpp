#include "watch/analysis/checks/check_spec.h"

#include <fmt/format.h>

#include "watch/analysis/wording.h"

namespace dlreset::watch {

bool alive_at(const ProcessRecord& record, double time_s) {
  return record.start_s <= time_s && (!record.end_s || *record.end_s > time_s);
}

std::string details_section(const Check& check, const char* one, const char* many) {
  if (check.count == 0) return "";
  std::string text = "  " + plural(check.count, one, many) + ":\n";
  for (const std::string& detail : check.details) text += "    " + detail + "\n";
  return text;
}

std::string stack_tracebacks(const WatchReport& report, const std::vector<std::size_t>& events,
                             std::string (*heading)(const WatchReport& report, const StackGroup& group)) {
  const PythonView& python = report.python;
  std::string text;
  for (const StackGroup& group : group_by_stack(python, events)) {
    const HookEvent& event = python.events[group.events.front()];
    const std::string times = group.events.size() > 1 ? fmt::format(" ({} times)", group.events.size()) : "";
    text += format_traceback(heading(report, group) + times, event.stack, event.frames_omitted, "    ");
  }
  return text;
}

}  // namespace dlreset::watch
