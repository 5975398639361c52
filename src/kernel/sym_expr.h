// Small symbolic integer expressions over kernel parameters, program ids and locals:
// tile extents ("BLOCK_M"), loop trip counts ("cdiv(K, BLOCK_K)"), strides and offsets of
// memory accesses, bytes and FLOPs per program. Built by the Kernel IR, printed in its
// output and evaluated once a case binds the names to integers.
//
// Entry points: the constructors (num, var, add, mul, ...) fold constants and flatten sums
// and products, so that equal expressions print equally; str() prints Python-like text;
// eval() evaluates with an environment and says nullopt when a name is unbound, the
// expression is opaque or arithmetic is undefined (division by zero, overflow).
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

struct Node {
  Op op = Op::kNum;
  int64_t value = 0;          // kNum
  std::string name;           // kVar, kOpaque (its text)
  std::vector<Expr> args;
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
