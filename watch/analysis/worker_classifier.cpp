#include "watch/analysis/worker_classifier.h"

#include <cstddef>
#include <map>

namespace dlreset::watch {

namespace {

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

/// A shell forks copies of itself for subshells, pipelines and command substitutions; none of
/// them is a DataLoader worker. Told by the kernel's name for it, or its command's first word.
bool is_shell(const ProcessRecord& record) {
  static const char* const kShells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"};
  const std::string first_word = record.cmdline.substr(0, record.cmdline.find(' '));
  const std::string program = first_word.substr(first_word.rfind('/') + 1);
  for (const char* shell : kShells) {
    if (record.comm == shell || program == shell || program == std::string("-") + shell) return true;
  }
  return false;
}

}  // namespace

CommandKind classify_command(const std::string& cmdline) {
  if (contains(cmdline, "--dlreset-worker")) return CommandKind::dlreset_worker;
  if (contains(cmdline, "multiprocessing.spawn") || contains(cmdline, "--multiprocessing-fork")) {
    return CommandKind::spawn_worker;
  }
  if (contains(cmdline, "multiprocessing.forkserver")) return CommandKind::forkserver;
  if (contains(cmdline, "multiprocessing.resource_tracker") || contains(cmdline, "multiprocessing.semaphore_tracker")) {
    return CommandKind::mp_helper;
  }
  return CommandKind::plain;
}

void classify_processes(std::vector<ProcessRecord>& records) {
  // Records come in the order first seen, so a parent's class is settled before its children's.
  std::map<pid_t, std::size_t> newest;  // pid -> index of the record a child of it refers to
  std::map<std::size_t, CommandKind> kinds;
  for (std::size_t i = 0; i < records.size(); ++i) {
    ProcessRecord& record = records[i];
    const auto parent = newest.find(record.parent);
    const ProcessRecord* parent_record = parent == newest.end() ? nullptr : &records[parent->second];
    newest[record.pid] = i;
    const CommandKind kind = classify_command(record.cmdline);
    kinds[i] = kind;
    record.start = WorkerStart::none;
    if (record.role == ProcessRole::root) continue;
    if (record.exec_seen || parent_record == nullptr) {
      switch (kind) {
        case CommandKind::spawn_worker:
          record.role = ProcessRole::worker;
          record.start = WorkerStart::spawn;
          break;
        case CommandKind::dlreset_worker:
          record.role = ProcessRole::worker;
          record.start = WorkerStart::dlreset_spawn;
          break;
        case CommandKind::forkserver:
        case CommandKind::mp_helper: record.role = ProcessRole::helper; break;
        case CommandKind::plain: record.role = ProcessRole::other; break;
      }
      continue;
    }
    // A copy of its parent.
    ProcessRecord& parent_of = records[parent->second];
    const CommandKind parent_kind = kinds[parent->second];
    if (parent_of.role == ProcessRole::helper) {
      // The forkserver's forks are the workers; a tracker's are not.
      record.role = parent_kind == CommandKind::forkserver ? ProcessRole::worker : ProcessRole::other;
      record.start = parent_kind == CommandKind::forkserver ? WorkerStart::forkserver : WorkerStart::none;
    } else if ((parent_of.role == ProcessRole::worker && parent_of.start != WorkerStart::spawn) || is_shell(record)) {
      // A fork worker's own child, or a subshell (a wrapper script's): not a worker. A fork that
      // never ran exec is an image of its parent as it was when it forked, so the record itself
      // says whether that was a shell: a wrapper that runs `X=$(...)` and then execs python
      // forked its subshell as bash, whatever its own record says it runs now.
      record.role = ProcessRole::other;
    } else {
      // A program that forks copies of itself is a training process with workers: the root, a
      // program the root ran (through a shell, say), or a spawned rank.
      if (parent_of.role != ProcessRole::root) {
        parent_of.role = ProcessRole::program;
        parent_of.start = WorkerStart::none;
      }
      record.role = ProcessRole::worker;
      record.start = WorkerStart::fork;
    }
  }
}

}  // namespace dlreset::watch
