// The domain of the attention recognition and its evaluator (attention_form.h says what it
// proves; attention_values.cpp holds the rules).
//
// Domain. Every value the body computes is one of: a uniform scalar (its multiplicative
// factors as Python text, and its integer form where it has one); an index vector u +
// tl.arange(0, n), possibly broadcast as a column ([:, None]) or a row ([None, :]); a mask
// (conjuncts: causal rows >= keys, keys < bound, rows < bound); the Q, K or V tile (Q
// possibly scaled); the scores c * Q K^T with their masks; a row max of scores; the running
// max m (on entry to the loop) and m_new = max(m, rowmax); the difference s - m_new scaled
// by k; p = base^that; alpha = base^(k (m - m_new)); row sums; l on entry, l * alpha,
// l_new; the accumulator on entry, scaled by alpha, acc_new; after the loop, the output
// acc / l. Every other operation gives "unknown" with its line, which refuses the kernel
// when the output depends on it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_ir.h"
#include "transform/pass_context.h"
#include "transform/passes/attention_form.h"

namespace tf::attention {


enum class VK {
  kUnknown, kScalar, kIndex, kPtrRows, kPtrCols, kMask, kNegInf, kInit, kMaskTile, kQ, kK, kV,
  kScore, kRowMax, kMCarry, kMNew, kDiff, kMDiff, kProb, kAlpha, kRowSum,
  kLCarry, kLScaled, kLNew, kAccCarry, kAccScaled, kPV, kAccNew, kMFinal, kLFinal, kAccFinal, kOut, kLogL, kLse,
  kDtype,  // a dtype (`tl.float16`, a local or helper parameter bound to one): its name in `dtype`
  // The normalized form (kernl's: each block's probabilities divided by the running sum, the
  // accumulator kept divided by it): s - rowmax(s), its exponential (the block's own
  // numerators), their row sum, rowmax - m_new, its exponential (beta), beta / l_new, l / l_new,
  // l / l_new * alpha (the accumulator's rescale).
  kLDiff, kLProb, kLRowSum, kMLDiff, kBeta, kPScale, kLRatio, kAccScaleN,
};

struct Conj {
  std::string kind;   // "causal", "key_bound", "row_bound"; "fill": masked scores get a finite value
  std::string expr;   // causal: the rows' first index; bounds: the bound (Python text); fill: the value
  sym::Expr e;        // the same expression (null for a fill)
  // fill: the scores' factors where the value replaced them (it is in their units); on_tile:
  // the value sits in a mask tile not yet added to the scores (their factors are taken then)
  std::vector<std::string> at;
  bool on_tile = false;
  bool operator<(const Conj& o) const {
    return std::tie(kind, expr, at, on_tile) < std::tie(o.kind, o.expr, o.at, o.on_tile);
  }
  bool operator==(const Conj& o) const { return kind == o.kind && expr == o.expr && at == o.at && on_tile == o.on_tile; }
};

struct Val {
  VK k = VK::kUnknown;
  std::string why;                  // unknown: what was not understood, with its line
  std::vector<std::string> factors; // scalar; Q's scale; scores' c; diff / alpha / p: k
  std::vector<std::string> mfactors;// the running max's c (row max, m_new, diff, p)
  sym::Expr isym;                   // scalar: integer form; index: uniform part
  bool is_loop_var = false;         // index: u is the key loop's variable
  int bcast = -1;                   // index: 0 column, 1 row
  int rank = 0;                     // init: 1 for [BLOCK_M], 2 for [BLOCK_M, HEAD_DIM]
  double fill = 0;                  // init: the value (finite)
  std::vector<Conj> conds;          // mask; scores' masks
  int base = -1;                    // diff is not exponentiated yet; p, alpha: 0 e, 2 two
  bool cast = false;                // a tile rounded to a dtype
  std::string dtype;                // that dtype ("float16", "bfloat16", "input")
  bool transposed = false;          // K
  bool norm = false;                // p, P V, the accumulator: divided by the running sum (normalized form)
};









Val valOf(VK k);
Val unknown(const std::string& why);
std::vector<std::string> sorted(std::vector<std::string> xs);
bool sameFactors(const std::vector<std::string>& a, const std::vector<std::string>& b);
std::vector<Conj> mergeConds(std::vector<Conj> a, const std::vector<Conj>& b);
// The Python text of 1 / (product of factors); "1" (no factor) for none.
std::string reciprocal(const std::vector<std::string>& factors);
bool isPosInfNode(const Node& n);
bool isNegInfNode(const Node& n);
// A finite negative number written as a literal (-1e6, -1.0e6, float("-1e9")): what some
// kernels mask scores with instead of -inf; nullopt otherwise.
std::optional<double> negativeLiteral(const Node& n);

class Evaluator {
 public:
  Evaluator(const PassContext& ctx, const KernelIR& kir, const AttentionForm& form)
      : ctx_(ctx), kir_(kir), form_(form) {}

  std::map<std::string, Val> env;
  bool after_loop = false;
  int cur_loop = -1;  // the Kernel IR loop being read (tells apart a helper's accesses inlined twice)
  std::vector<sym::Expr> pointer_rows;  // first rows of Q's and the output's tiles, from their pointers

  void notePointerRows(const Val& p);

  Val eval(const Node& n);

  // The value of a test on constexpr flags and modes in this form (`FLAG`, `not FLAG`, `A or B`,
  // `STAGE & 1`, `STAGE == 2`, a helper's mode bound to `4 - STAGE`), or nullopt with `why`
  // naming the flag (flag:NAME, a name tested for truth) or mode (mode:NAME, a name whose value
  // counts) when the form has not fixed it, or saying the test is not one.
  std::optional<bool> flagTest(const Node& t, std::string* why) const;
  // An integer the form fixes (`truth`: only its truth counts), as flagTest reads it.
  std::optional<int64_t> constInt(const Node& t, bool truth, std::string* why) const;

  int line(const Node& n) const;

  // The Kernel IR access of a tensor descriptor's `.load(...)` or `.store(...)` (`method`) at a
  // call, or -1 when the call is not one.
  int descriptorAccess(const Node& call, const char* method) const;

 private:
  const PassContext& ctx_;
  const KernelIR& kir_;
  const AttentionForm& form_;

  static std::string short_(std::string s);

  std::string tlFn(const Node& call) const;

  const Node* arg(const Node& call, size_t i, const char* kw) const;

  // The access of the Kernel IR at a call's position.
  int accessAt(const Node& call) const;


  sym::Expr symOf(const Node& n) const;

  // A scalar name or expression: parameters, module names, numbers and scalar locals.
  bool scalarNode(const Node& n) const;

  Val scalarValue(const Node& n);

  Val evalInner(const Node& n);

  std::string castTarget(const Node& d) const;
  Val call(const Node& n);

  std::string paramOf(int access) const;

  Val dot(const Node& n);

  Val compare(const Node& n);

  // A tile of zeros, possibly masked to -inf, plus the scores: the scores under that mask.
 public:
  static Val maskedScores(Val a, Val b);

 private:
  Val binop(const Node& n);

 public:
  // `a op b` over the domain: `right` is b's node (a literal added to an initial tile), `whole`
  // the expression's (nullptr for `x op= y`, whose scalar arithmetic is not followed).
  Val combine(const std::string& op, Val a, Val b, const Node& right, const Node* whole);
};

}  // namespace tf::attention
