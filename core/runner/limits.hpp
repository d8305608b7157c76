// An experiment's memory limit (`memory:` in the series): applied in its worker, and recognised
// by the parent when the worker ran into it.
//
// The limit is on host memory, through RLIMIT_DATA rather than RLIMIT_AS. A CUDA context reserves
// far more address space than it uses (mapped without access); a cap on the address space
// (RLIMIT_AS) makes that reservation, and so CUDA itself, fail. Since Linux 4.7, RLIMIT_DATA
// counts the private writable mappings a process makes (the heap, malloc's larger blocks, thread
// stacks) and leaves inaccessible reservations and shared mappings alone. On an H200 machine
// (Linux 6.18, CUDA 13.0), under a 4 GiB RLIMIT_DATA a context, an 8 GiB cudaMalloc and 6 GiB of
// cudaMallocHost written through all succeeded and a 6 GiB malloc failed; under a 4 GiB RLIMIT_AS
// the context failed. So the limit catches a plugin's host allocations, lets CUDA start, and does
// not cover pinned host memory. A failed malloc in C code (rather than operator new) is not
// recognised: the experiment then fails with whatever the plugin made of it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace expr::runner {

// In the worker, before its job: caps the data segment at `bytes`, and makes a failed C++
// allocation announce itself on `channel_fd` (the worker's line to its parent) before
// std::bad_alloc is thrown, so the parent can tell the limit from other failures even when the
// plugin turns the bad_alloc into another error or the process dies of it. A limit that cannot
// be set ends the worker with that error: running without it is not what was asked.
void limit_memory(std::uint64_t bytes, int channel_fd);

// Whether a message from the worker is that announcement.
bool is_memory_exhausted(const nlohmann::json& message);

// The failure reason: "exceeded its memory limit of 8 GiB".
std::string memory_limit_exceeded(std::uint64_t bytes);

}  // namespace expr::runner
