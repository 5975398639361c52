// Small symbolic integer expressions over kernel parameters, program ids and locals:
// tile extents ("BLOCK_M"), loop trip counts ("cdiv(K, BLOCK_K)"), strides and offsets of
// memory accesses, bytes and FLOPs per program. Built by the Kernel IR, printed in its
// output and evaluated once a case binds the names to integers.
//
// Entry points: the constructors (num, var, add, mul, ...) fold constants and flatten sums
// and products, so that equal expressions print equally; str() prints Python-like text;
// eval() evaluates with an environment and says nullopt when a name is unbound, the
// expression is opaque or arithmetic is undefined (division by zero, overflow).
//
// Bounded work (issue 11): every node carries its printed text, the size and depth of the
// tree that text spells out, and a structural hash, all computed once when it is built, so
// printing, comparing and walking never revisit shared subtrees. An expression that would
// exceed kMaxTerms nodes or kMaxDepth levels is not built: the constructors return a
// "limit" leaf instead, an opaque value (it never evaluates: unknown) whose text names it
// uniquely, and count the event (limitHits()) so that callers can say what was not judged.
// Chains such as `x = x * s + x` or ten nested if/else updates of one offset double the
// tree at each step; without the limit a 300-line kernel took minutes to analyse.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tf::sym {

enum class Op {
  kNum, kVar, kOpaque,                       // leaves
  kAdd, kMul,                                // n-ary, flattened
  kFloorDiv, kMod, kCDiv, kMin, kMax, kPow2,  // kPow2: next_power_of_2(x)
  kLt, kLe, kGt, kGe, kEq, kNe, kAnd, kOr, kNot,
  kSelect,                                   // args: cond, then, else
};

struct Node;
using Expr = std::shared_ptr<const Node>;

// Larger expressions are unreadable and cost more than they tell: the tree a text spells
// out (shared subtrees counted each time they print) and its nesting. The largest in the
// corpus, the examples and the bench kernels have 55 nodes and depth 10; a per-program byte
// count over 80 distinct accesses still fits.
inline constexpr uint32_t kMaxTerms = 1024;
inline constexpr uint32_t kMaxDepth = 64;

// Built only by the functions below; immutable once built (safe to share between threads).
struct Node {
  Op op = Op::kNum;
  int64_t value = 0;          // kNum
  std::string name;           // kVar, kOpaque (its text)
  std::vector<Expr> args;
  // Derived when built.
  std::string text;           // str()
  uint32_t size = 1;          // nodes of the printed tree (at most kMaxTerms)
  uint32_t depth = 1;
  uint64_t hash = 0;          // structural
  bool has_opaque = false;    // an opaque leaf inside (or is one)
  bool has_limit = false;     // a limit leaf inside (or is one)
};

// Leaves.
Expr num(int64_t v);
Expr var(const std::string& name);
Expr opaque(const std::string& text);   // something not understood; never evaluates

// Arithmetic (folding constants). Any argument may be null: the result is then null.
Expr add(const Expr& a, const Expr& b);
Expr sub(const Expr& a, const Expr& b);
Expr mul(const Expr& a, const Expr& b);
Expr neg(const Expr& a);
Expr floorDiv(const Expr& a, const Expr& b);
Expr mod(const Expr& a, const Expr& b);
Expr cdiv(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr nextPow2(const Expr& a);
Expr cmp(Op op, const Expr& a, const Expr& b);
Expr logicalAnd(const Expr& a, const Expr& b);
Expr logicalOr(const Expr& a, const Expr& b);
Expr logicalNot(const Expr& a);
Expr select(const Expr& cond, const Expr& then, const Expr& otherwise);
// The product of a list (1 for an empty list).
Expr product(const std::vector<Expr>& xs);

std::string str(const Expr& e);         // "" for null
std::optional<int64_t> constant(const Expr& e);
bool isOpaque(const Expr& e);           // contains an opaque leaf (or is null)
// Contains a leaf that stands for an expression over kMaxTerms / kMaxDepth.
bool overLimit(const Expr& e);
// Expressions replaced by a limit leaf so far on this thread (monotonic; compare two readings).
uint64_t limitHits();
bool same(const Expr& a, const Expr& b);

// Name lookup for evaluation; nullopt: unbound.
using Env = std::function<std::optional<int64_t>(const std::string&)>;
std::optional<int64_t> eval(const Expr& e, const Env& env);
Env envOf(const std::map<std::string, int64_t>& values);

// Every variable name in `e`.
void collectVars(const Expr& e, std::set<std::string>& out);
std::set<std::string> vars(const Expr& e);
// Replaces variables; `fn` returns null to keep a variable.
Expr substitute(const Expr& e, const std::function<Expr(const std::string&)>& fn);

// The parts of a sum (the expression itself if it is not a sum), and the factors of a product.
std::vector<Expr> addends(const Expr& e);
std::vector<Expr> factors(const Expr& e);
// The largest power of two that divides every value `e` can take, given divisibility of its
// variables (`div(name)`, 1 when unknown); capped at 2^20. 0 means "the value is 0".
int64_t divisibility(const Expr& e, const std::function<int64_t(const std::string&)>& div);

}  // namespace tf::sym
