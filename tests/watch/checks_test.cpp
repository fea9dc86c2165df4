// The table of the watch's checks holds every row to what the report and the command rely on, so
// that a new check's row is checked the moment it is added.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "watch/analysis/checks/checks.h"
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

}  // namespace
}  // namespace dlreset::watch
