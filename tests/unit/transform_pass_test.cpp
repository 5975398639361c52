// The pass framework: specs, parameter validation, the registry and switching passes off,
// the source editor's region indentation, and the `transform` command end to end.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "transform/pass.h"
#include "transform/pass_applier.h"
#include "transform/pass_context.h"
#include "transform/source_editor.h"
#include "transform/transform.h"
#include "util/error.h"

namespace tf {
namespace {
namespace fs = std::filesystem;

TEST(PassSpec, NameAndArguments) {
  PassSpec s = parsePassSpec("retile:BLOCK_M=128, BLOCK_N=64");
  EXPECT_EQ(s.name, "retile");
  ASSERT_EQ(s.args.size(), 2u);
  EXPECT_EQ(s.args[0], (std::pair<std::string, std::string>{"BLOCK_M", "128"}));
  EXPECT_EQ(s.args[1], (std::pair<std::string, std::string>{"BLOCK_N", "64"}));
  EXPECT_TRUE(parsePassSpec("grouped-order").args.empty());
}

TEST(PassSpec, BracketsKeepCommas) {
  PassSpec s = parsePassSpec("autotune:configs=[BLOCK=128 num_warps=4; BLOCK=256],key=[n,m]");
  ASSERT_EQ(s.args.size(), 2u);
  EXPECT_EQ(s.args[0].second, "[BLOCK=128 num_warps=4; BLOCK=256]");
  EXPECT_EQ(s.args[1].second, "[n,m]");
}

TEST(PassSpec, Malformed) {
  EXPECT_THROW(parsePassSpec(":x=1"), UserError);
  EXPECT_THROW(parsePassSpec("retile:BLOCK"), UserError);
  EXPECT_THROW(parsePassSpec("retile:BLOCK=1,BLOCK=2"), UserError);
  EXPECT_THROW(parsePassSpec("autotune:configs=[a=1"), UserError);
  EXPECT_THROW(parsePassSpec("retile:1x=2"), UserError);
}

std::string validationError(const std::string& spec) {
  try {
    PassSpec s = parsePassSpec(spec);
    validateArgs(*findPass(s.name), s);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(PassArgs, ValidationNamesTheProblem) {
  EXPECT_EQ(validationError("launch:num_warps=3"), "pass 'launch': num_warps=3 is not a power of two");
  EXPECT_EQ(validationError("launch:num_warps=64"), "pass 'launch': num_warps=64 is outside 1..32");
  EXPECT_EQ(validationError("launch:num_warps=x"), "pass 'launch': num_warps=x is not an integer");
  EXPECT_EQ(validationError("launch:warps=4"),
            "pass 'launch': unknown parameter 'warps' (it takes: num_warps, num_stages, num_ctas, maxnreg)");
  EXPECT_EQ(validationError("split-k:mode=tree"), "pass 'split-k': mode=tree is not one of atomic|two-stage");
  EXPECT_EQ(validationError("grouped-order:m=1x"), "pass 'grouped-order': '1x' in m is not a name");
  EXPECT_EQ(validationError("retile:BLOCK=64"), "");  // any key: the pass checks them
}

TEST(PassArgs, DefaultsFilledIn) {
  PassSpec s = parsePassSpec("split-k");
  PassArgs a = validateArgs(*findPass("split-k"), s);
  EXPECT_EQ(a.integer("split"), 4);
  EXPECT_EQ(a.text("mode"), "atomic");
  EXPECT_FALSE(a.has("out"));
  EXPECT_EQ(PassArgs(std::map<std::string, std::string>{{"key", "M+N"}}).names("key"), (std::vector<std::string>{"M", "N"}));
  EXPECT_EQ(PassArgs(std::map<std::string, std::string>{{"key", "[M, N]"}}).names("key"), (std::vector<std::string>{"M", "N"}));
}

TEST(PassRegistry, TheCatalogue) {
  std::vector<std::string> names;
  for (const auto& p : allPasses()) {
    names.push_back(p->info().name);
    EXPECT_FALSE(p->info().summary.empty()) << p->info().name;
    EXPECT_FALSE(p->info().preconditions.empty()) << p->info().name;
    EXPECT_EQ(findPass(p->info().name), p.get());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"retile", "launch", "autotune", "grouped-order", "rows-per-program",
                                             "column-loop", "split-k", "persistent", "tensor-cores", "memory-hints",
                                             "vectorize", "exp2", "online-softmax", "causal-split",
                                             "flatten-loops", "relayout", "eviction-hints", "tail-split", "implicit-gemm",
                                             "split-rows", "warp-specialize", "launcher-glue", "prefetch", "fused-sum", "fused-cast",
                                             "gluon-gemm", "gluon-attention"}));
  EXPECT_EQ(findPass("unroll"), nullptr);
}

TEST(PassFilter, SwitchOffByName) {
  PassFilter f;
  f.disable("split-k, persistent");
  EXPECT_FALSE(f.enabled("split-k"));
  EXPECT_FALSE(f.enabled("persistent"));
  EXPECT_TRUE(f.enabled("retile"));
  EXPECT_THROW(f.disable("splitk"), UserError);
  std::string listing = describePasses(f);
  EXPECT_NE(listing.find("split-k  (switched off)"), std::string::npos);
  EXPECT_EQ(listing.find("retile  (switched off)"), std::string::npos);
}

TEST(SourceEditor, IndentWrapsABlockWithEditsInside) {
  std::string text = "a\nb = 1\nc = 2\nd\n";
  SourceEditor ed(text);
  ed.replace({0, 2}, "for x in y:\n");     // line 1 becomes a loop header
  ed.replace({6, 7}, "10");                 // inside the block: b = 10
  ed.insert(2, "# inserted at the block's start stays outside\n");
  ed.indent({2, 14}, "    ");               // lines 2 and 3
  EXPECT_EQ(ed.apply(), "for x in y:\n# inserted at the block's start stays outside\n    b = 10\n    c = 2\nd\n");
}

TEST(SourceEditor, OutputColumnFollowsEarlierEdits) {
  std::string text = "k[(n,)](x, y)\n";
  SourceEditor ed(text);
  ed.replace({2, 6}, "(cdiv(n, 4),)");
  EXPECT_EQ(ed.outputColumn(8), 17u);  // `x` moved right by the grid's growth
  ed.insert(12, ", z=1");
  EXPECT_EQ(ed.insertedAt(12), ", z=1");
}

TEST(PassHelpers, WrapCallAlignsAfterTheParenthesis) {
  std::string s = wrapCall("d = tl.make_tensor_descriptor", {"a_ptr", "shape=[M, K]", "strides=[stride_am, 1]",
                                                               "block_shape=[BLOCK_M, BLOCK_K]"},
                           4, 80);
  EXPECT_EQ(s, "d = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],\n"
               "                                  block_shape=[BLOCK_M, BLOCK_K])");
}

TEST(TransformDriver, SwitchedOffPassIsBadInput) {
  static WorkerProcess worker(test::workerOptions(false));
  TransformRequest req;
  req.source = test::sourceDir() / "examples" / "matmul" / "matmul.py";
  req.pass = "grouped-order";
  req.switched_off = {"grouped-order"};
  std::string text = test::readFile(req.source);
  try {
    runTransform(worker, req, text);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "the pass 'grouped-order' is switched off (--no-pass)");
  }
  req.switched_off.clear();
  req.kernel = "nope";
  EXPECT_THROW(runTransform(worker, req, text), UserError);
}

TEST(TransformDriver, SignatureSpec) {
  auto s = parseSignature("a_ptr=*fp16, M=i32,BLOCK=128,FLAG=True");
  EXPECT_EQ(s.at("a_ptr"), "*fp16");
  EXPECT_EQ(s.at("M"), "i32");
  EXPECT_EQ(s.at("BLOCK"), 128);
  EXPECT_EQ(s.at("FLAG"), true);
  EXPECT_THROW(parseSignature("a_ptr"), UserError);
  // a descriptor's block shape keeps its commas
  auto d = parseSignature("q_desc=tensordesc<fp16[128, 64]>,N=i32");
  EXPECT_EQ(d.at("q_desc"), "tensordesc<fp16[128, 64]>");
  EXPECT_EQ(d.at("N"), "i32");
  EXPECT_EQ(d.size(), 2u);
}

// --- the command ----------------------------------------------------------------------------

class TransformCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(test::tritonforgeBinary())) GTEST_SKIP() << "build the tritonforge target first";
    dir_ = test::tempDir("transform-cli");
    src_ = dir_ / "matmul.py";
    fs::copy_file(test::sourceDir() / "examples" / "matmul" / "matmul.py", src_);
    original_ = test::readFile(src_);
  }
  std::pair<int, std::string> tf(const std::string& args) {
    return test::runShell(test::tritonforgeBinary().string() + " transform " + args);
  }
  fs::path dir_, src_;
  std::string original_;
};

TEST_F(TransformCommand, ListsEveryPass) {
  auto [rc, out] = tf("--list");
  EXPECT_EQ(rc, 0);
  for (const auto& p : allPasses()) EXPECT_NE(out.find(p->info().name + "\n"), std::string::npos) << p->info().name;
  EXPECT_NE(out.find("preconditions:"), std::string::npos);
}

TEST_F(TransformCommand, RefusalExitsTwoWithTheReason) {
  auto [rc, out] = tf(src_.string() + " --pass rows-per-program --no-compile");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("rows-per-program refused: programs step by BLOCK_M (pid_m * BLOCK_M): the kernel tiles a "
                     "dimension"),
            std::string::npos)
      << out;
  EXPECT_EQ(test::readFile(src_), original_);
}

TEST_F(TransformCommand, StdoutByDefaultInputUntouched) {
  auto [rc, out] = tf(src_.string() + " --pass grouped-order --no-compile 2>/dev/null");
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("GROUP_M: tl.constexpr"), std::string::npos);
  EXPECT_EQ(test::readFile(src_), original_);
}

TEST_F(TransformCommand, OutputFileAndExplicitOverwrite) {
  fs::path out_file = dir_ / "out.py";
  auto [rc, out] = tf(src_.string() + " --pass launch:num_warps=8 --no-compile -o " + out_file.string());
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(test::readFile(out_file).find("num_warps=8"), std::string::npos);
  EXPECT_EQ(test::readFile(src_), original_);
  auto [rc2, out2] = tf(src_.string() + " --pass launch:num_warps=8 --no-compile -o " + src_.string());
  EXPECT_EQ(rc2, 0);
  EXPECT_NE(out2.find("overwriting " + src_.string()), std::string::npos) << out2;
  EXPECT_NE(test::readFile(src_).find("num_warps=8"), std::string::npos);
}

TEST_F(TransformCommand, BadParameterAndSwitchedOff) {
  auto [rc, out] = tf(src_.string() + " --pass launch:num_warps=3 --no-compile");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("num_warps=3 is not a power of two"), std::string::npos) << out;
  auto [rc2, out2] = tf(src_.string() + " --pass launch:num_warps=8 --no-pass launch --no-compile");
  EXPECT_EQ(rc2, 2);
  EXPECT_NE(out2.find("switched off"), std::string::npos) << out2;
}

TEST_F(TransformCommand, CompileCheckUsesTheTask) {
  auto [rc, out] = tf(src_.string() + " --pass retile:BLOCK_M=64 --task " +
                      (test::sourceDir() / "examples" / "matmul" / "task.toml").string() + " -o " +
                      (dir_ / "o.py").string());
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("compiled for sm_90"), std::string::npos) << out;
}

// A constexpr launched with several literal values (split-rows' stages) is compiled with each:
// the second value's branch does not compile, and the check says so.
TEST_F(TransformCommand, CompileCheckCompilesEachValueOfAConstexpr) {
  auto write = [&](const std::string& launches) {
    fs::path p = dir_ / "two_modes.py";
    test::writeFile(p, "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                       "def two_modes(x_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):\n"
                       "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                       "    if MODE == 1:\n"
                       "        tl.static_assert(MODE == 0, \"mode 1 does not compile\")\n"
                       "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n\n\n"
                       "def run(x):\n"
                       "    n = x.numel()\n" + launches + "    return x\n");
    return p;
  };
  const std::string sig = " --pass launch:num_warps=8 --signature x_ptr=*fp32,n=i32 -o " + (dir_ / "o.py").string();
  auto [rc, out] = tf(write("    two_modes[(triton.cdiv(n, 256),)](x, n, MODE=0, BLOCK=256)\n").string() + sig);
  EXPECT_EQ(rc, 0) << out;
  auto [rc2, out2] = tf(write("    two_modes[(triton.cdiv(n, 256),)](x, n, MODE=0, BLOCK=256)\n"
                              "    two_modes[(triton.cdiv(n, 256),)](x, n, MODE=1, BLOCK=256)\n")
                            .string() +
                        sig);
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("does not compile"), std::string::npos) << out2;
}

// A parameter the signature does not name, which the launch passes as an integer it reads off a
// tensor (an earlier rewrite's, as relayout's `b_stride1`), is compiled as i32, not skipped.
TEST_F(TransformCommand, CompileCheckTypesAStrideTheLaunchPasses) {
  // The suite's tf32 GEMM takes B's column stride as 1; relayout makes it a parameter.
  const fs::path kernel = test::sourceDir() / "bench" / "kernels" / "matmul_tf32";
  fs::path relaid = dir_ / "relaid.py";
  auto [rc, out] = tf((kernel / "matmul_tf32.py").string() + " --pass relayout --task " +
                      (kernel / "task.toml").string() + " -o " + relaid.string());
  ASSERT_EQ(rc, 0) << out;
  ASSERT_NE(test::readFile(relaid).find("b_stride1"), std::string::npos) << test::readFile(relaid);
  auto [rc2, out2] = tf(relaid.string() + " --pass launch:num_warps=8 --task " + (kernel / "task.toml").string() +
                        " -o " + (dir_ / "o.py").string());
  EXPECT_EQ(rc2, 0) << out2;
  EXPECT_NE(out2.find("compiled for sm_90"), std::string::npos) << out2;
  EXPECT_EQ(out2.find("compile check skipped"), std::string::npos) << out2;
}

}  // namespace
TEST(PassVariants, APassesOwnParametersAreSearchedDefaultFirst) {
  TransformPassApplier applier(test::workerOptions(false), TransformSettings{}, {});
  auto v = applier.paramVariants("split-k", {{"mode", "two-stage"}}, 4);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], (nlohmann::json{{"mode", "two-stage"}, {"split", 4}}));  // the pass's default first
  EXPECT_EQ(v[1]["split"], 2);
  for (const auto& x : v) EXPECT_EQ(x["mode"], "two-stage");
  // A parameter the proposal fixes is not searched.
  EXPECT_EQ(applier.paramVariants("split-k", {{"split", 8}}, 4), (std::vector<nlohmann::json>{{{"split", 8}}}));
  EXPECT_EQ(applier.paramVariants("column-loop", nlohmann::json::object(), 2).size(), 2u);
  EXPECT_EQ(applier.paramVariants("memory-hints", nlohmann::json::object(), 4).size(), 1u);  // nothing to search
  // The rule engine's persistent proposal for a dot kernel fixes one program per SM: the four
  // variants are flatten x warp_specialize, the plain loop first.
  auto p = applier.paramVariants("persistent", {{"programs_per_sm", 1}}, 4);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], (nlohmann::json{{"programs_per_sm", 1}, {"flatten", 0}, {"warp_specialize", 0}}));
  EXPECT_EQ(p[1], (nlohmann::json{{"programs_per_sm", 1}, {"flatten", 0}, {"warp_specialize", 1}}));
  EXPECT_EQ(p[3], (nlohmann::json{{"programs_per_sm", 1}, {"flatten", 1}, {"warp_specialize", 1}}));
  // Descriptor loads are tried with the store kept, as a descriptor store, and as a descriptor
  // store in two halves (half the staging buffer).
  EXPECT_EQ(applier.paramVariants("tensor-cores", {{"loads", "descriptor"}}, 4),
            (std::vector<nlohmann::json>{{{"loads", "descriptor"}, {"stores", "keep"}},
                                         {{"loads", "descriptor"}, {"stores", "descriptor"}},
                                         {{"loads", "descriptor"}, {"stores", "subtiled"}}}));
  // A loop nest is flattened in the source first, then by Triton.
  EXPECT_EQ(applier.paramVariants("flatten-loops", nlohmann::json::object(), 4),
            (std::vector<nlohmann::json>{{{"mode", "source"}}, {{"mode", "compiler"}}}));
}

}  // namespace tf
