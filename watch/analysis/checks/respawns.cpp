// The respawns check: workers meant to last (a persistent loader's, where the hook names the
// loader) replaced by a new generation, each with the stack that stopped the one it replaced.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/wording.h"

namespace dlreset::watch {

namespace {

/// --max-respawns's --help.
constexpr const char* kHelp =
    "Fail if workers meant to last (a persistent loader's, where the Python hook names the loader) were "
    "replaced more often than this";
/// --expect-persistent's --help.
constexpr const char* kExpectHelp =
    "Fail if workers meant to last (a persistent loader's) were replaced at all (the same as "
    "--max-respawns 0)";

void find(const CheckInput& input, Check& check, Findings& findings) {
  const GenerationReport& generations = input.generations;
  const PythonView& python = input.python;
  check.count = static_cast<long>(generations.respawns.size());
  for (const Respawn& respawn : generations.respawns) {
    // The generation it replaced: the newest earlier one of the same parent.
    const Generation& now = generations.generations[static_cast<std::size_t>(respawn.generation - 1)];
    std::optional<std::size_t> stopped;
    for (std::size_t g = 0; g + 1 < static_cast<std::size_t>(respawn.generation); ++g) {
      if (generations.generations[g].parent == now.parent && g < python.generation_stopped.size() &&
          python.generation_stopped[g]) {
        stopped = python.generation_stopped[g];
      }
    }
    if (!stopped) {
      ++findings.respawns_without_cause;
      continue;
    }
    const auto same =
        std::find_if(findings.respawn_causes.begin(), findings.respawn_causes.end(), [&](const Findings::Cause& cause) {
          return same_stack(python.events[cause.stopped.events.front()].stack, python.events[*stopped].stack);
        });
    if (same == findings.respawn_causes.end()) {
      findings.respawn_causes.push_back(Findings::Cause{StackGroup{{*stopped}}, {respawn.generation}});
    } else {
      same->stopped.events.push_back(*stopped);
      same->respawns.push_back(respawn.generation);
    }
    check.events.push_back(*stopped);
  }
}

/// The respawns grouped by the stack that caused them, with its traceback.
std::string section(const WatchReport& report, const Check& check) {
  const Findings& findings = report.findings;
  const PythonView& python = report.python;
  if (findings.respawn_causes.empty()) return "";
  std::string text = findings.respawn_causes.size() == 1 && findings.respawns_without_cause == 0
                         ? fmt::format("  {}, all from this stack:\n", plural(check.count, "respawn", "respawns"))
                         : fmt::format("  {}, from {}:\n", plural(check.count, "respawn", "respawns"),
                                       plural(static_cast<long>(findings.respawn_causes.size()), "stack", "stacks"));
  for (const Findings::Cause& cause : findings.respawn_causes) {
    const HookEvent& event = python.events[cause.stopped.events.front()];
    if (findings.respawn_causes.size() > 1 || findings.respawns_without_cause > 0) {
      text += fmt::format("    {} from this one:\n",
                          plural(static_cast<long>(cause.respawns.size()), "respawn", "respawns"));
    }
    text += format_traceback(reset_heading(python, cause.stopped), event.stack, event.frames_omitted, "    ");
  }
  if (findings.respawns_without_cause > 0) {
    text += fmt::format("    {} whose old workers the hook did not see stopped\n",
                        plural(findings.respawns_without_cause, "respawn", "respawns"));
  }
  return text;
}

std::string gate_words(const WatchReport& report, const Check& check) {
  std::string times;
  for (const Respawn& respawn : report.generations.respawns) {
    times += (times.empty() ? "" : ", ") + fmt::format("{:.2f} s", respawn.time_s - report.result.origin_s);
  }
  return fmt::format("workers were replaced {} time{} (at {})", check.count, check.count == 1 ? "" : "s", times);
}

}  // namespace

CheckSpec respawns_check() {
  return {{"respawns", "--max-respawns", kHelp, "respawn", "--expect-persistent", kExpectHelp},
          {find, section, nullptr, nullptr, gate_words}};
}

}  // namespace dlreset::watch
