// The fast engine's worker threads: one pool per process, started on first need and kept for
// later calls (a thread per chunk per call cost a thread start on every call, and a start that
// failed ended the process), shared by every host thread that calls the engine.
#pragma once

namespace qscheme::fast::detail {

// Calls run(ctx, k) exactly once for every k in [0, chunks), on the calling thread and on up to
// chunks - 1 pool workers, and returns when every call has returned. The calling thread takes
// chunks too, so the calls all run even when no worker can be had (none could be started, the
// pool is shut down at process exit, or every worker is busy with other callers' chunks) and a
// chunk may itself call run_chunks. A call that throws stops the chunks not yet started; the
// first exception is rethrown here once the chunks already started have returned.
void run_chunks(unsigned chunks, void (*run)(void* ctx, unsigned k), void* ctx);

}  // namespace qscheme::fast::detail
