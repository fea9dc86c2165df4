#include "app/progress_bar.h"

#include <fmt/format.h>

namespace dlreset::app {

namespace {
std::string clock_text(double seconds) {
  const auto whole = static_cast<long long>(seconds);
  return fmt::format("{:02}:{:02}", whole / 60, whole % 60);
}
}  // namespace

void ProgressBar::draw(bool force) {
  const auto now = Clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0;
  const double left = rate > 0 ? static_cast<double>(total_ - done_) / rate : 0.0;
  std::string text =
      fmt::format("{}: {}/{} [{}<{}, {:.1f}it/s", label_, done_, total_, clock_text(elapsed), clock_text(left), rate);
  if (!in_validation_ && done_ > 0) text += fmt::format(", loss={:.3f}", loss_);
  if (val_batches_ > 0 && !in_validation_) {
    text += fmt::format(", val_loss={:.3f}", val_loss_sum_ / static_cast<double>(val_batches_));
  }
  text += "]";
  std::fprintf(out_, "\r\033[K%s", text.c_str());
  std::fflush(out_);
}

void ProgressBar::on_sanity_check_start() { label_ = "Sanity Checking"; }

void ProgressBar::on_train_epoch_start(int epoch, std::int64_t num_batches) {
  label_ = fmt::format("Epoch {}", epoch);
  done_ = 0;
  total_ = num_batches;
  val_loss_sum_ = 0.0;
  val_batches_ = 0;
  in_validation_ = false;
  started_ = Clock::now();
  draw(true);
}

void ProgressBar::on_train_batch_end(const data::Batch&, std::int64_t, double loss) {
  ++done_;
  loss_ = loss;
  draw(done_ == total_);
}

void ProgressBar::on_validation_start(lightning::RunningStage stage, std::int64_t num_batches) {
  in_validation_ = true;
  if (stage == lightning::RunningStage::sanity_checking) {
    label_ = "Sanity Checking";
    done_ = 0;
    total_ = num_batches;
    started_ = Clock::now();
  } else {
    label_ += " (validating)";
  }
  draw(true);
}

void ProgressBar::on_validation_batch_end(const data::Batch&, std::int64_t, double loss) {
  if (label_ != "Sanity Checking") {
    val_loss_sum_ += loss;
    ++val_batches_;
    return;
  }
  ++done_;
  draw(false);
}

void ProgressBar::on_validation_end(lightning::RunningStage stage) {
  in_validation_ = false;
  if (stage == lightning::RunningStage::sanity_checking) std::fprintf(out_, "\r\033[K");
}

void ProgressBar::on_train_epoch_end(int epoch) {
  label_ = fmt::format("Epoch {}", epoch);
  in_validation_ = false;
  draw(true);
  std::fprintf(out_, "\n");
  std::fflush(out_);
}

}  // namespace dlreset::app
