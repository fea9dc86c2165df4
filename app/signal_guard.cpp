#include "app/signal_guard.h"

#include "harness/data/core/interrupt.h"

namespace dlreset::app {

namespace {

extern "C" void on_stop_signal(int signal_number) { data::request_interrupt(signal_number); }

void install(int signal_number, struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = &on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND: a second signal kills at once. No SA_RESTART: a blocking call in the main
  // thread may as well return early; the DataLoader's waits check the request anyway.
  action.sa_flags = SA_RESETHAND;
  ::sigaction(signal_number, &action, previous);
}

}  // namespace

SignalGuard::SignalGuard() {
  install(SIGINT, &previous_int_);
  install(SIGTERM, &previous_term_);
}

SignalGuard::~SignalGuard() {
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
}

}  // namespace dlreset::app
