// The table of the watch's checks holds every row to what the report and the command rely on, so
// that a new check's row is checked the moment it is added.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "watch/analysis/checks/checks.h"
#include "watch/analysis/checks/gate_verdict.h"
#include "watch/analysis/findings.h"

namespace dlreset::watch {
namespace {

/// "--max-" and the name with its underscores as dashes: "late_set_epoch" is --max-late-set-epoch.
std::string gate_flag_of(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return "--max-" + name;
}

TEST(Checks, EveryRowHasAUniqueNameAGateFlagNamedAfterItAndAFinder) {
  std::set<std::string> names;
  std::size_t complete = 0;
  for (const CheckSpec& spec : checks()) {
    names.insert(spec.flags.name);
    EXPECT_EQ(spec.flags.gate_flag, gate_flag_of(spec.flags.name)) << spec.flags.name;
    EXPECT_NE(std::string(spec.flags.help), "") << spec.flags.name;
    // A check's own --expect-* flag needs its help, and the help its flag.
    EXPECT_EQ(spec.flags.expect_flag == nullptr, spec.flags.expect_help == nullptr) << spec.flags.name;
    complete += spec.steps.find != nullptr && spec.steps.gate_words != nullptr;
  }
  EXPECT_EQ(names.size(), checks().size());
  EXPECT_EQ(complete, checks().size());
  EXPECT_EQ(names.count(""), 0u);
}

TEST(Checks, FindingsHoldOneCheckARowInTheTablesOrder) {
  const Findings findings;
  ASSERT_EQ(findings.checks.size(), checks().size());
  for (std::size_t i = 0; i < checks().size(); ++i) {
    EXPECT_EQ(findings.checks[i].name, checks()[i].flags.name);
    EXPECT_EQ(&findings.check(checks()[i].flags.name), &findings.checks[i]);
    EXPECT_EQ(findings.checks[i].count, 0);
  }
}

TEST(Checks, ACheckTheTableDoesNotHaveIsAnErrorThatNamesIt) {
  const Findings findings;
  try {
    findings.check("idle_workers");
    FAIL() << "check() returned a check the table does not have";
  } catch (const std::logic_error& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr("'idle_workers'"));
  }
}

/// The table's row named `name`.
const CheckSpec& row(const std::string& name) {
  for (const CheckSpec& spec : checks()) {
    if (spec.flags.name == name) return spec;
  }
  throw std::logic_error("no check '" + name + "' in the table");
}

/// One gate to judge: a row of the table, its limit, and what its check counted, measured and saw.
struct JudgedGate {
  const char* check = "";
  double limit = 0;
  long count = 0;
  std::optional<double> measure;
  bool seen = true;
};

TEST(JudgeGate, CountsPassedFailedAndUnseenGatesAlikeForACountAndAMeasure) {
  const std::vector<JudgedGate> gates = {
      {"respawns", 2, 2, std::nullopt, true},      // at its limit: passed
      {"respawns", 2, 3, std::nullopt, true},      // above it: failed
      {"respawns", 2, 0, std::nullopt, false},     // not seen: unseen, for all its count of 0
      {"input_wait", 0.5, 0, 0.5, true},           // at its limit: passed
      {"input_wait", 0.5, 0, 0.51, true},          // above it: failed
      {"input_wait", 0.5, 0, std::nullopt, true},  // seen, but nothing measured: unseen, not passed on a 0
      {"input_wait", 0.5, 0, 0.1, false},          // not seen: unseen, for all its measure below the limit
  };
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::size_t unseen = 0;
  std::size_t entries_that_agree = 0;
  for (const JudgedGate& gate : gates) {
    const GateVerdict verdict = judge_gate(row(gate.check), gate.limit, gate.count, gate.measure, gate.seen);
    passed += verdict.passed ? 1 : 0;
    failed += verdict.seen && !verdict.passed ? 1 : 0;
    unseen += verdict.seen ? 0 : 1;
    const nlohmann::json entry = gate_entry(row(gate.check), gate.limit, verdict);
    entries_that_agree += entry["passed"] == verdict.passed && entry["seen"] == verdict.seen ? 1 : 0;
  }
  EXPECT_EQ(passed, 2u);
  EXPECT_EQ(failed, 2u);
  EXPECT_EQ(unseen, 3u);
  EXPECT_EQ(entries_that_agree, gates.size());
}

/// The entry of `check`'s gate at `limit`, judged against `count` and `measure`, seen.
std::string entry_of(const char* check, double limit, long count, std::optional<double> measure) {
  return gate_entry(row(check), limit, judge_gate(row(check), limit, count, measure, true)).dump();
}

TEST(JudgeGate, TheEntryHoldsACountedLimitAsAnIntegerAndAMeasureOnlyWhereTheGateHoldsOne) {
  EXPECT_EQ(entry_of("respawns", 2, 3, std::nullopt),
            R"({"check":"respawns","count":3,"flag":"--max-respawns","limit":2,"passed":false,"seen":true})");
  EXPECT_EQ(entry_of("input_wait", 0.5, 0, 0.25),
            R"({"check":"input_wait","count":0,"flag":"--max-input-wait","limit":0.5,"measure":0.25,"passed":true,)"
            R"("seen":true})");
  EXPECT_EQ(entry_of("input_wait", 0.5, 0, std::nullopt),
            R"({"check":"input_wait","count":0,"flag":"--max-input-wait","limit":0.5,"measure":null,"passed":false,)"
            R"("seen":false})");
}

}  // namespace
}  // namespace dlreset::watch
