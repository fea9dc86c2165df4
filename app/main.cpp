// The dlreset command. A spawned DataLoader worker never gets here: it runs its worker loop
// before main (harness/data/core/worker/spawn_main.cpp).
#include "app/cli.h"

int main(int argc, char** argv) { return dlreset::app::main_cli(argc, argv); }
