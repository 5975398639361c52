// `tritonforge census` on small kernels of tests/corpus/: what became of each pass, counted;
// bad input gets one line and exit 2. And reasonClass, the grouping of refusal reasons.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "transform/census.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

std::pair<int, std::string> tf(const std::string& args) {
  return test::runShell(test::tritonforgeBinary().string() + " " + args);
}

std::string corpus(const std::string& name) { return (test::sourceDir() / "tests/corpus" / name).string(); }

const nlohmann::json* trial(const nlohmann::json& census, const std::string& kernel, const std::string& pass) {
  for (const auto& f : census["files"]) {
    for (const auto& k : f["kernels"]) {
      if (k["name"] != kernel) continue;
      for (const auto& t : k["trials"]) {
        if (t["pass"] == pass) return &t;
      }
    }
  }
  return nullptr;
}

TEST(CensusCli, CountsEveryPassOnEveryKernel) {
  auto [rc, out] = tf("census --json " + corpus("vector_add.py") + " " + corpus("softmax_row.py") + " 2>/dev/null");
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["schema"], "tritonforge.census/1");
  const auto& c = j["counts"];
  EXPECT_EQ(c["files"], 2);
  EXPECT_EQ(c["kernels"], 2);
  EXPECT_EQ(c["trials"], 54);  // 27 passes, each once per kernel
  EXPECT_EQ(c["applied"], 12);
  EXPECT_EQ(c["refused"], 42);
  EXPECT_EQ(c["broken"], 0);
  EXPECT_EQ(c["crashed"], 0);
  int applied = 0, refused = 0;
  for (const auto& p : c["passes"]) {
    applied += p["applied"].get<int>();
    refused += p["refused"].get<int>();
  }
  EXPECT_EQ(applied, 12);
  EXPECT_EQ(refused, 42);

  // retile doubles the launch's BLOCK of the add; launch sets 4 warps where 8 are written.
  const auto* retile = trial(j, "add_kernel", "retile");
  ASSERT_TRUE(retile);
  EXPECT_EQ((*retile)["status"], "applied");
  EXPECT_EQ((*retile)["spec"], "retile:BLOCK=2048");
  const auto* launch = trial(j, "softmax_kernel", "launch");
  ASSERT_TRUE(launch);
  EXPECT_EQ((*launch)["spec"], "launch:num_warps=4");
  EXPECT_EQ((*launch)["status"], "applied");
  // The add has no dot: tensor-cores says so with the kernel's name, which its class replaces.
  const auto* tensor_cores = trial(j, "add_kernel", "tensor-cores");
  ASSERT_TRUE(tensor_cores);
  EXPECT_EQ((*tensor_cores)["spec"], "tensor-cores:loads=descriptor");
  EXPECT_EQ((*tensor_cores)["status"], "refused");
  EXPECT_EQ((*tensor_cores)["reason"], "add_kernel has no tl.dot");
  EXPECT_EQ((*tensor_cores)["class"], "<name> has no tl.dot");
  EXPECT_EQ((*tensor_cores)["family"], "absent");
  // Both kernels are refused so, by tensor-cores and by relayout: one class, two kernels, two
  // files, four trials.
  bool found = false;
  for (const auto& cls : c["classes"]) {
    if (cls["class"] != "<name> has no tl.dot") continue;
    found = true;
    EXPECT_EQ(cls["kernels"], 2);
    EXPECT_EQ(cls["files"], 2);
    EXPECT_EQ(cls["trials"], 4);
    EXPECT_EQ(cls["passes"], nlohmann::json({{"relayout", 2}, {"tensor-cores", 2}}));
  }
  EXPECT_TRUE(found);
  // softmax's BLOCK is computed from the row: retile is refused, with the kernel's name and
  // the parameter's both replaced.
  const auto* retile_softmax = trial(j, "softmax_kernel", "retile");
  ASSERT_TRUE(retile_softmax);
  EXPECT_EQ((*retile_softmax)["status"], "refused");
  EXPECT_EQ((*retile_softmax)["class"],
            "<name> cannot be retiled: <name> spans a whole dimension (no loop or program steps by it): it must not "
            "shrink; it is computed from the shape, so it is left as written");
  // The facts beside the trials.
  const auto& facts = j["files"][0]["kernels"][0]["facts"];
  EXPECT_EQ(facts["launches"], 1);
  EXPECT_EQ(facts["dots"], 0);
  EXPECT_EQ(facts["autotune"], "none");
}

TEST(CensusCli, TextSummaryAndPassSelection) {
  auto [rc, out] = tf("census --pass split-k,retile " + corpus("vector_add.py") + " 2>/dev/null");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("census: 1 files, 1 kernels, 2 trials: 1 applied, 1 refused, 0 broken, 0 crashed"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("absent: <name> has no loop with a tl.dot at the top of its body"), std::string::npos) << out;
}

TEST(CensusCli, BadInput) {
  test::expectOneLineError(test::tritonforgeBinary().string() + " census", "census: give one or more Python sources");
  test::expectOneLineError(test::tritonforgeBinary().string() + " census " + corpus("vector_add.py") + " /nonexistent/k.py",
                           "/nonexistent/k.py");
  fs::path dir = test::tempDir("census-bad");
  test::writeFile(dir / "notes.py", "These are notes, not Python (\n");
  test::expectOneLineError(test::tritonforgeBinary().string() + " census " + (dir / "notes.py").string(),
                           "notes.py:1:");
  test::writeFile(dir / "latin1.py", "x = '\xe9'\n");
  test::expectOneLineError(test::tritonforgeBinary().string() + " census " + (dir / "latin1.py").string(),
                           "latin1.py:1: kernel source is not valid UTF-8");
  test::expectOneLineError(test::tritonforgeBinary().string() + " census --pass nosuch " + corpus("vector_add.py"),
                           "no pass named 'nosuch'");
  test::expectOneLineError(test::tritonforgeBinary().string() + " census --no-pass nosuch " + corpus("vector_add.py"),
                           "nosuch");
}

TEST(CensusReasonClass, ReplacesNamesQuotedTextAndNumbers) {
  std::set<std::string> names = {"_attn_fwd", "BLOCK_M", "x_ptr", "layer_norm", "a", "v"};
  EXPECT_EQ(reasonClass("no launch of _attn_fwd in this file", names), "no launch of <name> in this file");
  EXPECT_EQ(reasonClass("BLOCK_M is chosen by @triton.autotune; use the autotune pass", names),
            "<name> is chosen by @triton.autotune; use the autotune pass");
  EXPECT_EQ(reasonClass("line 42: a loop inside the loop", names), "line N: a loop inside the loop");
  EXPECT_EQ(reasonClass("the mask 'm & (c < n)' is used for more than its tl.where", names),
            "the mask '<v>' is used for more than its tl.where");
  EXPECT_EQ(reasonClass("the epilogue `acc * 2.5` uses the accumulator", names), "the epilogue `<e>` uses the accumulator");
  // An apostrophe inside a word is no quote; tl.program_id(0)'s digit is a number; fp16 a word.
  EXPECT_EQ(reasonClass("the kernel's operands are fp16: tl.program_id(0) twice", names),
            "the kernel's operands are fp16: tl.program_id(N) twice");
  // A name after a dot is an attribute (the API), not the kernel's name.
  EXPECT_EQ(reasonClass("x_ptr.layer_norm and x_ptr", names), "<name>.layer_norm and <name>");
  EXPECT_EQ(reasonClass("no type or value for x_ptr, BLOCK_M, layer_norm (give --signature)", names),
            "no type or value for <name>, ... (give --signature)");
  // A word after a hyphen is kept ("1-D" of a kernel with a parameter D), and so is a plain
  // name in the reason's code example (the T of P * T) unless the sentence named it.
  std::set<std::string> letters = {"D", "T", "W", "pid"};
  EXPECT_EQ(reasonClass("vectorize handles 1-D kernels (P * T + tl.arange(0, T))", letters),
            "vectorize handles N-D kernels (P * T + tl.arange(N, T))");
  EXPECT_EQ(reasonClass("programs step by W (pid * W)", letters), "programs step by <name> (pid * <name>)");
  // The article "a" of a kernel with a parameter a; the placeholder '<v>' of one with a local v.
  EXPECT_EQ(reasonClass("a launch passes a positionally; the mask 'v' is used", names),
            "a launch passes a positionally; the mask '<v>' is used");
  // The "s" of "launcher's" is no name.
  EXPECT_EQ(reasonClass("comes from the launcher's parameter 'n'", {"s"}), "comes from the launcher's parameter '<v>'");
}

TEST(CensusReasonClass, TheReasonsOwnWordsAreNoNames) {
  // "scale" is a word of exp2's reason for a kernel without such a name: a kernel with a local
  // scale keeps it as written there, so both reasons share one class.
  CensusFile file;
  file.path = "k.py";
  for (const char* name : {"with_scale", "without_scale"}) {
    CensusKernel k;
    k.name = name;
    k.names = {name};
    if (std::string(name) == "with_scale") k.names.insert("scale");
    CensusTrial t;
    t.pass = "exp2";
    t.reason = "line 3: the argument of tl.exp is neither E * scale nor a sum of names in " + std::string(name);
    k.trials.push_back(t);
    file.kernels.push_back(k);
  }
  std::vector<CensusFile> files = {file};
  classifyReasons(files);
  EXPECT_EQ(files[0].kernels[0].trials[0].reason_class,
            "line N: the argument of tl.exp is neither E * scale nor a sum of names in <name>");
  EXPECT_EQ(files[0].kernels[1].trials[0].reason_class, files[0].kernels[0].trials[0].reason_class);
  EXPECT_EQ(files[0].kernels[1].trials[0].family, "precondition");
}

TEST(CensusReasonClass, Families) {
  using S = CensusTrial::Status;
  EXPECT_EQ(reasonFamily("no launch of <name> in this file", S::kRefused), "needs-task");
  EXPECT_EQ(reasonFamily("no launch of kernel in this file", S::kRefused), "needs-task");
  EXPECT_EQ(reasonFamily("<name> is launched at module level", S::kRefused), "launch-form");
  EXPECT_EQ(reasonFamily("num_warps: no launch of <name> inside a function", S::kRefused), "launch-form");
  EXPECT_EQ(reasonFamily("tf32 rounds the dot's operands; give the task's tolerances", S::kRefused), "needs-task");
  EXPECT_EQ(reasonFamily("census: the kernel has no constexpr tile size", S::kRefused), "census");
  EXPECT_EQ(reasonFamily("<name> has no tl.dot", S::kRefused), "absent");
  EXPECT_EQ(reasonFamily("<name> calls no tl.exp", S::kRefused), "absent");
  EXPECT_EQ(reasonFamily("the dot operand '<v>' is not loaded with tl.load in the K loop", S::kRefused), "precondition");
  EXPECT_EQ(reasonFamily("crashed", S::kCrashed), "crash");
  EXPECT_EQ(reasonFamily("broken", S::kBroken), "broken");
}

}  // namespace
}  // namespace tf
