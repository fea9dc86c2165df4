#include "watch/analysis/hang_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <regex>
#include <sstream>
#include <utility>

namespace dlreset::watch {

namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

/// A Python frame ('File "...", line N in F') of the program's own files: not the standard
/// library's, an installed package's, or a frozen module's.
bool is_program_frame(const std::string& frame) {
  for (const char* library : {"/lib/python3", "/dist-packages/", "/site-packages/", "File \"<"}) {
    if (frame.find(library) != std::string::npos) return false;
  }
  return starts_with(frame, "File ");
}

std::string role_of(const WatchReport& report, pid_t pid) {
  const ProcessRecord* found = nullptr;
  for (const ProcessRecord& record : report.result.processes) {
    if (record.pid == pid) found = &record;  // the newest record of a reused pid
  }
  if (found == nullptr) return "process";
  switch (found->role) {
    case ProcessRole::root: return "the program";
    case ProcessRole::worker: return fmt::format("worker of pid {}", found->parent);
    case ProcessRole::helper: return "multiprocessing helper";
    case ProcessRole::program: return "training process";
    case ProcessRole::other: break;
  }
  return "process";
}

/// Python's threads: "Thread 0x... (most recent call first):" or "Current thread 0x... (...):",
/// then '  File "...", line N in F' lines. The main thread's outermost frame is a module's.
std::vector<ThreadStack> python_threads(const std::string& text) {
  std::vector<ThreadStack> threads;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (starts_with(line, "Thread 0x") || starts_with(line, "Current thread 0x")) {
      const std::size_t at = line.find("0x");
      threads.push_back({"thread " + line.substr(at, line.find(' ', at) - at), {}});
    } else if (starts_with(line, "  File ") && !threads.empty()) {
      threads.back().frames.push_back(line.substr(2));
    }
  }
  for (ThreadStack& thread : threads) {
    const auto& frames = thread.frames;
    if (std::any_of(frames.begin(), frames.end(),
                    [](const std::string& frame) { return frame.find(" in _pin_memory_loop") != std::string::npos; })) {
      thread.name = "pin-memory thread";
    }
  }
  const auto main = std::find_if(threads.begin(), threads.end(), [](const ThreadStack& thread) {
    return !thread.frames.empty() && thread.frames.back().find(" in <module>") != std::string::npos;
  });
  if (main != threads.end()) {
    main->name = "main thread";
    std::rotate(threads.begin(), main, main + 1);
  }
  return threads;
}

/// eu-stack's "TID N:" and gdb's "Thread N (... (LWP N) ...):", then "#K ..." frames.
std::vector<ThreadStack> native_threads(const ProcessStacks& stacks) {
  std::vector<ThreadStack> threads;
  static const std::regex kEuThread(R"(^TID (\d+):)");
  static const std::regex kGdbThread(R"(^Thread \d+ .*\(LWP (\d+)\))");
  std::istringstream lines(stacks.text);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, kEuThread) || std::regex_search(line, match, kGdbThread)) {
      const pid_t tid = static_cast<pid_t>(std::stol(match[1].str()));
      threads.push_back({tid == stacks.pid ? "main thread" : "thread " + match[1].str(), {}});
    } else if (starts_with(line, "#") && !threads.empty()) {
      threads.back().frames.push_back(line);
    }
  }
  const auto main = std::find_if(threads.begin(), threads.end(),
                                 [](const ThreadStack& thread) { return thread.name == "main thread"; });
  if (main != threads.end()) std::rotate(threads.begin(), main, main + 1);
  return threads;
}

}  // namespace

std::vector<ThreadStack> split_threads(const ProcessStacks& stacks) {
  return stacks.source == "python" ? python_threads(stacks.text) : native_threads(stacks);
}

std::string frame_words(const std::string& frame) {
  static const std::regex kPython(R"re(^File "(.*)", line (\d+) in (.*)$)re");
  // gdb's "#1  0x00007f... in sem_wait ()", eu-stack's "#1  0x00007f... sem_wait", and gdb's
  // innermost frame, which may have no address: "#0  sem_wait () at ...".
  static const std::regex kGdb(R"(^#\d+\s+0x[0-9a-f]+ in (\S+))");
  static const std::regex kEu(R"(^#\d+\s+0x[0-9a-f]+\s+(\S+))");
  static const std::regex kBare(R"(^#\d+\s+(\S+))");
  std::smatch match;
  if (std::regex_search(frame, match, kPython)) {
    return fmt::format("{} ({}, line {})", match[3].str(), match[1].str(), match[2].str());
  }
  for (const std::regex* native : {&kGdb, &kEu, &kBare}) {
    if (std::regex_search(frame, match, *native)) return match[1].str();
  }
  return frame;
}

std::vector<ProcessHang> describe_hang(const WatchReport& report, const HangRecord& hang) {
  std::vector<ProcessHang> processes;
  for (const ProcessStacks& stacks : hang.stacks) {
    ProcessHang process;
    process.pid = stacks.pid;
    process.role = role_of(report, stacks.pid);
    process.source = stacks.source;
    process.why_none = stacks.why_none;
    if (!stacks.source.empty()) process.threads = split_threads(stacks);
    if (!process.threads.empty() && !process.threads.front().frames.empty()) {
      const std::vector<std::string>& frames = process.threads.front().frames;
      process.stuck_in = frame_words(frames.front());
      if (stacks.source == "python") {
        const auto own = std::find_if(frames.begin(), frames.end(), is_program_frame);
        if (own != frames.end() && own != frames.begin()) process.called_from = frame_words(*own);
      }
    }
    processes.push_back(std::move(process));
  }
  std::sort(processes.begin(), processes.end(), [&](const ProcessHang& a, const ProcessHang& b) {
    return std::make_pair(a.pid != hang.sign.pid, a.pid) < std::make_pair(b.pid != hang.sign.pid, b.pid);
  });
  return processes;
}

std::string hang_words(const HangSign& sign) {
  if (sign.rule == HangRule::batches) {
    return fmt::format("pass {} of {} in pid {} handed out no batch for {:.1f} s ({})", sign.pass, sign.iterator,
                       sign.pid, sign.quiet_s,
                       sign.batches == 0 ? std::string("before its first batch")
                                         : fmt::format("after at least {} batches", sign.batches));
  }
  return fmt::format("the whole process tree used no CPU for {:.1f} s", sign.quiet_s);
}

std::string hang_text(const WatchReport& report, const HangRecord& hang, bool stacks) {
  std::string text =
      fmt::format("  hung at {:.2f} s: {}; {}\n", since_watch_began(report, hang.sign.time_s), hang_words(hang.sign),
                  hang.stopped ? "the watch ended the program (--on-hang stop)"
                               : "the watch went on (--on-hang report)");
  for (const ProcessHang& process : describe_hang(report, hang)) {
    text += fmt::format("    pid {} ({}): {}\n", process.pid, process.role,
                        process.source.empty() ? "no stacks: " + process.why_none
                        : process.stuck_in.empty()
                            ? process.source + " stacks, no frame"
                            : fmt::format("stuck in {}{} ({} stacks)", process.stuck_in,
                                          process.called_from.empty() ? "" : ", called from " + process.called_from,
                                          process.source));
    if (!stacks) continue;
    for (const ThreadStack& thread : process.threads) {
      text += fmt::format("      {}, innermost first:\n", thread.name);
      for (const std::string& frame : thread.frames) text += "        " + frame + "\n";
    }
  }
  return text;
}

}  // namespace dlreset::watch
