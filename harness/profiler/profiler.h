// Mirrors pytorch_lightning/profiler/base.py @ 1.5.0: the profiler interface and its scope.
#pragma once

#include <string>
#include <utility>

namespace dlreset::profiler {

/// Lightning's BaseProfiler: actions are named spans the loops open and close.
class Profiler {
 public:
  virtual ~Profiler() = default;
  /// `setup(stage)`: the trainer tells which entry point runs ("fit").
  virtual void setup(const std::string& /*stage*/) {}
  virtual void start(const std::string& action) = 0;
  virtual void stop(const std::string& action) = 0;
  /// A printable report; empty for a profiler that records nothing.
  virtual std::string summary() const = 0;
};

/// Lightning's PassThroughProfiler: the default, which costs nothing.
class PassThroughProfiler : public Profiler {
 public:
  void start(const std::string&) override {}
  void stop(const std::string&) override {}
  std::string summary() const override { return ""; }
};

/// `with profiler.profile(action):` as a scope.
class ProfileScope {
 public:
  ProfileScope(Profiler& profiler, std::string action) : profiler_(profiler), action_(std::move(action)) {
    profiler_.start(action_);
  }
  ~ProfileScope() { profiler_.stop(action_); }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  Profiler& profiler_;
  std::string action_;
};

}  // namespace dlreset::profiler
