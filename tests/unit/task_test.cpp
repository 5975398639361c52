// Task files: a good one parses; every bad input is one UserError naming the file and
// the key.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "task/task.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "util/error.h"

namespace tf {
namespace {

class TaskFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::tempDir("task");
    test::writeFile(dir_ / "k.py", "def launch(x):\n    return x\n");
    test::writeFile(dir_ / "h.py", "def make_inputs(case, seed):\n    return ()\ndef reference():\n    return 0\n");
  }
  std::filesystem::path write(const std::string& body) {
    auto p = dir_ / "task.toml";
    test::writeFile(p, body);
    return p;
  }
  // The message of the UserError that loading `body` throws ("" when none).
  std::string error(const std::string& body) {
    auto p = write(body);
    try {
      loadTask(p);
    } catch (const UserError& e) {
      std::string m = e.what();
      EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
      EXPECT_EQ(m.rfind(p.string(), 0), 0u) << "names the file first: " << m;
      return m;
    }
    return "";
  }
  std::filesystem::path dir_;
};

const char* kGood = R"(name = "t1"
source = "k.py"
launcher = "launch"
harness = "h.py"
cases = [ { M = 4096, N = 1024, dtype = "fp16" }, { M = 8, N = 8, flag = true } ]
kernels = ["k"]
[check]
rtol = 1e-3
atol = 0
seeds = 3
reference_precision = "as-is"
in_place = [0]
[signature.k]
x_ptr = "*fp16"
BLOCK = 128
)";

TEST_F(TaskFile, GoodTaskParses) {
  Task t = loadTask(write(kGood));
  EXPECT_EQ(t.name, "t1");
  EXPECT_EQ(t.source, dir_ / "k.py");
  EXPECT_EQ(t.harness, dir_ / "h.py");
  EXPECT_EQ(t.launcher, "launch");
  ASSERT_EQ(t.cases.size(), 2u);
  EXPECT_EQ(t.cases[0]["M"], 4096);
  EXPECT_EQ(t.cases[0]["dtype"], "fp16");
  EXPECT_EQ(t.cases[1]["flag"], true);
  EXPECT_EQ(t.caseLabel(0), "M=4096,N=1024,dtype=fp16");
  EXPECT_DOUBLE_EQ(*t.check.rtol, 1e-3);
  EXPECT_DOUBLE_EQ(*t.check.atol, 0.0);
  EXPECT_EQ(t.check.seeds, 3);
  EXPECT_EQ(t.check.reference_precision, "as-is");
  EXPECT_EQ(t.check.in_place, std::vector<int>{0});
  EXPECT_EQ(t.kernels, std::vector<std::string>{"k"});
  EXPECT_EQ(t.signatures["k"]["x_ptr"], "*fp16");
  EXPECT_EQ(t.signatures["k"]["BLOCK"], 128);
}

TEST_F(TaskFile, DefaultsWhenOptionalKeysAreMissing) {
  Task t = loadTask(write("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n"));
  EXPECT_FALSE(t.check.rtol.has_value());
  EXPECT_EQ(t.check.seeds, 2);
  EXPECT_EQ(t.check.reference_precision, "float64");
  EXPECT_EQ(t.direction, "forward");
}

TEST_F(TaskFile, DirectionBackwardIsReadAndRecorded) {
  Task t = loadTask(write("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n"
                          "direction='backward'\n"));
  EXPECT_EQ(t.direction, "backward");
  EXPECT_EQ(t.toJson()["direction"], "backward");
}

TEST_F(TaskFile, MissingKeys) {
  std::string base = "name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n";
  for (const char* key : {"name", "source", "launcher", "harness", "cases"}) {
    std::string body;
    std::istringstream in(base);
    std::string line;
    while (std::getline(in, line)) if (line.rfind(std::string(key) + "=", 0) != 0) body += line + "\n";
    std::string m = error(body);
    EXPECT_NE(m.find(std::string("missing key '") + key + "'"), std::string::npos) << m;
  }
}

TEST_F(TaskFile, WrongTypes) {
  EXPECT_NE(error("name=3\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n")
                .find("key 'name' must be a string, not an integer"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases={N=1}\n")
                .find("key 'cases' must be an array of tables, not a table"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[3]\n")
                .find("key 'cases[0]' must be a table"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n[check]\nrtol='x'\n")
                .find("key 'check.rtol' must be a number"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n[check]\nseeds=0\n")
                .find("check.seeds"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n[check]\n"
                  "reference_precision='fp8'\n")
                .find("reference_precision"),
            std::string::npos);
}

TEST_F(TaskFile, UnknownKeysAreErrors) {
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\nlaunchr='x'\n")
                .find("unknown key 'launchr'"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n[check]\nrtoll=1\n")
                .find("unknown key 'check.rtoll'"),
            std::string::npos);
}

TEST_F(TaskFile, MissingFiles) {
  EXPECT_NE(error("name='a'\nsource='nope.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n")
                .find("key 'source': source file"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='nope.py'\ncases=[{N=1}]\n")
                .find("key 'harness': harness file"),
            std::string::npos);
  std::filesystem::create_directories(dir_ / "adir");
  EXPECT_NE(error("name='a'\nsource='adir'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n")
                .find("is a directory"),
            std::string::npos);
}

TEST_F(TaskFile, BadValues) {
  EXPECT_NE(error("name='a/b'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[{N=1}]\n").find("key 'name'"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='1x'\nharness='h.py'\ncases=[{N=1}]\n").find("key 'launcher'"),
            std::string::npos);
  EXPECT_NE(error("name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\ncases=[]\n").find("'cases' is empty"),
            std::string::npos);
}

TEST_F(TaskFile, MalformedTomlGivesTheLine) {
  std::string m = error("name='a'\nsource = \n");
  EXPECT_NE(m.find("task.toml:2:"), std::string::npos) << m;
  EXPECT_NE(m.find("not valid TOML"), std::string::npos) << m;
}

// --- refusals: one line naming the file and the key, in process and through the CLI (exit 2)

const char* kBase = "name='a'\nsource='k.py'\nlauncher='launch'\nharness='h.py'\n";

class TaskRefusal : public TaskFile {
 protected:
  // `body` must be refused with a message holding `needle`, by loadTask and by the CLI.
  void expectRefused(const std::string& body, const std::string& needle) {
    std::string m = error(body);
    EXPECT_NE(m.find(needle), std::string::npos) << "expected '" << needle << "' in: " << m;
    auto [rc, out] = test::runShell(test::tritonforgeBinary().string() + " optimize " + (dir_ / "task.toml").string() +
                                    " --out " + (dir_ / "out").string());
    EXPECT_EQ(rc, 2) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_NE(out.find((dir_ / "task.toml").string() + ": "), std::string::npos) << out;
    EXPECT_NE(out.find(needle), std::string::npos) << out;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
  }
};

TEST_F(TaskRefusal, RtolThatIsNan) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\nrtol=nan\n", "key 'check.rtol' must be a finite number >= 0, not nan");
}

TEST_F(TaskRefusal, RtolThatIsInfinite) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\nrtol=inf\n", "key 'check.rtol' must be a finite number >= 0, not inf");
}

TEST_F(TaskRefusal, AtolThatIsNegative) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\natol=-1e-3\n", "key 'check.atol' must be a finite number >= 0, not -0.001");
}

TEST_F(TaskRefusal, AtolThatIsMinusInfinity) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\natol=-inf\n", "key 'check.atol' must be a finite number >= 0, not -inf");
}

TEST_F(TaskRefusal, CaseValueThatIsNan) {
  expectRefused(std::string(kBase) + "cases=[{N=1, eps=nan}]\n", "key 'cases[0].eps' must be a finite number, not nan");
}

TEST_F(TaskRefusal, CaseValueThatIsInfinite) {
  expectRefused(std::string(kBase) + "cases=[{N=1}, {N=2, scale=-inf}]\n", "key 'cases[1].scale' must be a finite number, not -inf");
}

TEST_F(TaskRefusal, CaseValueInAnArrayThatIsInfinite) {
  expectRefused(std::string(kBase) + "cases=[{shape=[1.0, inf]}]\n", "key 'cases[0].shape[1]' must be a finite number, not inf");
}

TEST_F(TaskRefusal, DirectionThatIsNeitherForwardNorBackward) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\ndirection='sideways'\n",
                "key 'direction' must be \"forward\" or \"backward\"");
  expectRefused(std::string(kBase) + "cases=[{N=1}]\ndirection=1\n", "key 'direction' must be \"forward\" or \"backward\"");
}

TEST_F(TaskRefusal, InPlaceIndexThatIsNegative) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\nin_place=[0, -1]\n",
                "key 'check.in_place[1]' must be an input index (an integer >= 0), not -1");
}

TEST_F(TaskRefusal, InPlaceIndexBeyondAnyInputCount) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\nin_place=[4294967296]\n",
                "key 'check.in_place[0]' must be an input index (an integer >= 0), not 4294967296");
}

TEST_F(TaskRefusal, OutputAtolThatIsNoListOfTolerances) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\noutput_atol=0.1\n",
                "key 'check.output_atol' must be an array of tolerances, one per output");
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\noutput_atol=[0.1, -1.0]\n",
                "key 'check.output_atol[1]' must be a finite number >= 0, not -1");
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\noutput_atol=[0.1, 'x']\n", "check.output_atol[1]");
  expectRefused(std::string(kBase) + "cases=[{N=1}]\ndirection='backward'\n[check]\noutput_atol=[0.1]\n",
                "key 'check.output_atol' is for forward tasks");
}

TEST_F(TaskRefusal, InPlaceIndexThatIsNotAnInteger) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[check]\nin_place=[1.5]\n",
                "key 'check.in_place[0]' must be an input index (an integer >= 0), not a float");
}

TEST_F(TaskRefusal, SignatureTypeWithAnUnknownFloatWidth) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[signature.k]\nx_ptr='*fp99'\n",
                "key 'signature.k.x_ptr': '*fp99' is not a Triton type");
}

TEST_F(TaskRefusal, SignatureTypeWithAnUnknownIntegerWidth) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[signature.k]\nn='i7'\n", "key 'signature.k.n': 'i7' is not a Triton type");
}

TEST_F(TaskRefusal, SignatureTypeThatIsNotTritonSpelling) {
  expectRefused(std::string(kBase) + "cases=[{N=1}]\n[signature.k]\nx='f32x'\n", "key 'signature.k.x': 'f32x' is not a Triton type");
}

TEST_F(TaskFile, SignatureAcceptsEveryTritonTypeName) {
  std::string body = std::string(kBase) + "cases=[{N=1}]\n[signature.k]\n";
  std::vector<std::string> types = {"i1",      "i8",      "i16",     "i32",      "i64",  "u1",   "u8",   "u16",
                                    "u32",     "u64",     "fp8e4nv", "fp8e5",    "fp8e4b15", "fp8e4b8",
                                    "fp8e5b16", "fp16",   "bf16",    "fp32",     "fp64"};
  int n = 0;
  for (const auto& t : types) {
    body += fmt::format("s{} = '{}'\np{} = '*{}'\n", n, t, n, t);
    ++n;
  }
  body += "c = '*kfp16'\nd = 'tensordesc<fp16[64, 64]>'\nBLOCK = 128\nEVEN = true\n";
  Task t = loadTask(write(body));
  const auto& sig = t.signatures.at("k");
  EXPECT_EQ(sig.size(), 2 * types.size() + 4);
  EXPECT_EQ(sig.at("s3"), "i32");
  EXPECT_EQ(sig.at("p15"), "*fp16");
  EXPECT_EQ(sig.at("c"), "*kfp16");
  EXPECT_EQ(sig.at("BLOCK"), 128);
  EXPECT_EQ(sig.at("EVEN"), true);
}

TEST(TaskFileMissing, NamesTheFile) {
  try {
    loadTask("/nonexistent/task.toml");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/task.toml: task file not found");
  }
}

}  // namespace
}  // namespace tf

namespace tf {
namespace {

const char* kMinimal = "name = \"t\"\nsource = \"k.py\"\nlauncher = \"launch\"\nharness = \"h.py\"\ncases = [ { N = 1 } ]\n";

TEST_F(TaskFile, APackageGivenByKeysIsTheOneTheSourceIsLoadedIn) {
  test::writeFile(dir_ / "site" / "lib" / "__init__.py", "");
  test::writeFile(dir_ / "site" / "lib" / "ops" / "__init__.py", "");
  Task t = loadTask(write(std::string(kMinimal) + "package = \"lib.ops\"\npackage_root = \"site\"\nsearch_path = [\"site\"]\n"));
  EXPECT_EQ(t.package.name, "lib.ops");
  EXPECT_EQ(t.package.root, (dir_ / "site").lexically_normal());
  ASSERT_EQ(t.search_path.size(), 1u);
  EXPECT_EQ(t.search_path[0], (dir_ / "site").lexically_normal());
}

TEST_F(TaskFile, PackageKeysAndSearchPathAreChecked) {
  test::writeFile(dir_ / "site" / "lib" / "__init__.py", "");
  std::string base = kMinimal;
  EXPECT_NE(error(base + "package = \"lib\"\n").find("keys 'package' and 'package_root' go together"), std::string::npos);
  EXPECT_NE(error(base + "package = \"lib..x\"\npackage_root = \"site\"\n").find("dotted Python package name"),
            std::string::npos);
  EXPECT_NE(error(base + "package = \"lib.ops\"\npackage_root = \"site\"\n").find("holds no package 'lib.ops'"),
            std::string::npos);
  EXPECT_NE(error(base + "package = 3\npackage_root = \"site\"\n").find("key 'package' must be a string"),
            std::string::npos);
  EXPECT_NE(error(base + "search_path = \"site\"\n").find("key 'search_path' must be an array"), std::string::npos);
  EXPECT_NE(error(base + "search_path = [\"nowhere\"]\n").find("search_path[0]': "), std::string::npos);
}

}  // namespace
}  // namespace tf
