// The expectation language: one guess per line, `observed OP guessed [tolerance]`.
//
//   kernels == 5
//   copies(kind=DtoD) == 0
//   kernel("flash_fwd").occupancy ~ 13% ± 2%
//   gpu_time / naive_inplace.gpu_time ~ 3.7 within 25%
//   kernel("cudnn").launch_api == "cuLaunchKernelEx"
//
// docs/expectations.md is the reference. This file only turns text into a tree (expression.hpp);
// check.hpp binds names to metrics and experiments and judges.
#pragma once

#include <string_view>

#include "expect/expression.hpp"

namespace expr::expect {

// The tree of `text`; throws SyntaxError where it does not parse, and where it is longer than
// max_guess_length or nests deeper than max_nesting.
GuessTree parse(std::string_view text);

// Throws SyntaxError, at the bytes past the limit, when `text` is longer than max_guess_length.
void bound_length(std::string_view text);

}  // namespace expr::expect
