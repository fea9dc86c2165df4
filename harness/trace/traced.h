// Marks the functions whose frames a reset trace must show.
#pragma once

/// A reset trace should read like the bug report's Python traceback, frame for frame. The
/// optimizer would otherwise inline small mirrored functions (update_dataloader_iter, the
/// fetcher's iter and reset) into their callers, and their names would vanish from the stack.
#define DLRESET_TRACED __attribute__((noinline))
