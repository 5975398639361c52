// What the passes that split one loop in two share (causal-split, tail-split): the text of a
// loop with edits applied, the conjuncts of a mask, a statement's own lines, whether a value
// comes from a tl.dot of the loop, and a loop step the split can rely on.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "transform/pass_context.h"

namespace tf {

// The name a Name node reads or binds, "" for anything else.
std::string nameOf(const Node& n);
// How often `name` is bound, by a storeCounts map (0 when never).
int countOf(const std::map<std::string, int>& stores, const std::string& name);

// `text` of the bytes in `whole` with `edits` (inside it, not overlapping) applied; throws
// std::logic_error on an overlap (a pass bug: callers catch it and refuse).
std::string withEdits(const PassContext& ctx, Range whole, TextEdits edits);

// The leaves of a conjunction a & b & c (BitAnd BinOps), left to right.
void conjunctsOf(const Node& e, std::vector<const Node*>* out);

// The whole lines of loop-body statement `i`; an empty range when another statement shares them.
Range statementLines(const PassContext& ctx, const Node& loop_body, int i);

// Does `e` (read at loop-body statement `before`) come from a tl.dot of the loop, directly or
// through names bound earlier in the loop body?
bool fromDot(const PassContext& ctx, const Node& loop_body, int before, const Node& e, int depth = 0);

// A constexpr parameter of the kernel or a positive int literal: a step every program sees alike.
bool isConstantStep(const PassContext& ctx, const Node& n);

// Texts that bound a loop's end from above: END as the range writes it, and when END is a name
// bound once, at the top level of the kernel body, to tl.minimum(A, B), each of A and B that is
// an int literal or a name the kernel never binds (a parameter). Offsets below END are below
// each of them.
std::set<std::string> endBounds(const PassContext& ctx, const Node& end);

}  // namespace tf
