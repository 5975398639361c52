// Facts from PTX and SASS text, the compile request's specialization, and the fallback to
// PTX when cuobjdump is missing (through the worker, when Triton is installed).
#include <gtest/gtest.h>

#include "compile/compiled_facts.h"
#include "support/test_support.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

const char* kPtx = R"(
.visible .entry mm(
)
{
	.reg .b32 	%r<10>;
	mov.u32 	%r1, %tid.x;
	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
	ld.global.L1::evict_last.b16 %rs1, [ %rd2 + 0 ];
	cp.async.cg.shared.global [ %r5 + 0 ], [ %rd3 + 0 ], 0x10, %r6;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd4, {%r2, %r3}], [%r4];
	cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd5, {%r2, %r3}], [%r1];
	wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f1}, %rd6, %rd7, %p2, 1, 1, 0, 1;
	wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f1}, %rd6, %rd7, %p2, 1, 1, 0, 1;
	fma.rn.f32 %f2, %f3, %f4, %f5;
	st.global.v2.b32 [ %rd8 + 0 ], { %r7, %r8 };
	st.local.b32 [ %rd9 + 0 ], %r9;
	ld.local.b32 %r9, [ %rd9 + 0 ];
	atom.global.gpu.relaxed.add.u32 %r1, [ %rd1 + 0 ], 1;
	ret;
}
)";

TEST(CompiledFacts, FromPtx) {
  InstructionFacts f = factsFromPtx(kPtx);
  EXPECT_EQ(f.from, "ptx");
  EXPECT_EQ(f.tensor_core, "wgmma");
  EXPECT_EQ(f.mma, 2);
  EXPECT_EQ(f.mma_shapes, std::vector<std::string>{"m64n128k16.f32.f16.f16"});
  EXPECT_EQ(f.fma, 1);
  EXPECT_EQ(f.global_loads, (std::map<int, int>{{16, 1}, {128, 1}}));
  EXPECT_EQ(f.global_stores, (std::map<int, int>{{64, 1}}));
  EXPECT_EQ(f.cp_async, 1);
  EXPECT_EQ(f.tma_loads, 1);
  EXPECT_EQ(f.tma_stores, 1);
  EXPECT_EQ(f.local_loads, 1);
  EXPECT_EQ(f.local_stores, 1);
  EXPECT_EQ(f.atomics, 1);
}

TEST(CompiledFacts, FromSass) {
  const char* sass = R"(
	code for sm_90a
		Function : k
        /*0000*/                   LDC R1, c[0x0][0x28] ;                                 /* 0x00000a00ff017b82 */
        /*0010*/               @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;                     /* 0x0000000402047981 */
        /*0020*/                   LDG.E.U16 R6, desc[UR4][R2.64] ;
        /*0030*/                   LDGSTS.E.BYPASS.128 [R7], desc[UR4][R2.64] ;
        /*0040*/                   HMMA.16816.F32 R8, R12, R16, R8 ;
        /*0050*/                   FFMA R1, R2, R3, R4 ;
        /*0060*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0070*/                   STL.64 [R1], R4 ;
        /*0080*/                   LDL.LU.64 R4, [R1] ;
        /*0090*/                   UTMALDG.2D [UR8], [UR4] ;
        /*00a0*/                   RED.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;
        /*00b0*/                   EXIT ;
)";
  InstructionFacts f = factsFromSass(sass);
  EXPECT_EQ(f.from, "sass");
  EXPECT_EQ(f.tensor_core, "mma");
  EXPECT_EQ(f.mma_shapes, std::vector<std::string>{"HMMA.16816.F32"});
  EXPECT_EQ(f.fma, 1);
  EXPECT_EQ(f.global_loads, (std::map<int, int>{{16, 1}, {128, 1}}));
  EXPECT_EQ(f.global_stores, (std::map<int, int>{{64, 1}}));
  EXPECT_EQ(f.cp_async, 1);
  EXPECT_EQ(f.tma_loads, 1);
  EXPECT_EQ(f.local_loads, 1);
  EXPECT_EQ(f.local_stores, 1);
  EXPECT_EQ(f.atomics, 1);
  EXPECT_EQ(f.instructions, 12);
}

TEST(CompiledFacts, RequestSpecializesLikeTheJit) {
  std::string missing;
  nlohmann::json r = toJson(compileRequest("k.py", "k", {"x_ptr", "n", "s", "one", "B"},
                                    {{"x_ptr", "*fp16"}, {"n", "i32"}, {"s", "i32"}, {"one", "constexpr"}},
                                    {{"n", 4096}, {"s", 1000}, {"one", 1}, {"B", 128}}, {"B"}, {{"num_warps", 8}}, &missing));
  EXPECT_EQ(missing, "");
  EXPECT_EQ(r["signature"], (nlohmann::json{{"x_ptr", "*fp16"}, {"n", "i32"}, {"s", "i32"}}));
  EXPECT_EQ(r["constexprs"], (nlohmann::json{{"B", 128}, {"one", 1}}));
  EXPECT_EQ(r["attrs"], (nlohmann::json{{"n", 16}}));  // 4096 is a multiple of 16, 1000 is not
  EXPECT_EQ(r["options"]["num_warps"], 8);
  compileRequest("k.py", "k", {"x_ptr", "B"}, {}, {}, {"B"}, {}, &missing);
  EXPECT_EQ(missing, "x_ptr, B");
}

TEST(CompiledFacts, FailureIsAStatus) {
  CompileReply reply;
  reply.worker = WorkerReply::Status::kFailed;
  reply.status = "out-of-resources";
  reply.message = "OutOfResources: shared memory";
  CompiledFacts f = parseCompiled(reply);
  EXPECT_EQ(f.status, "out-of-resources");
  EXPECT_EQ(compiledFactsJson(f)["reason"], "OutOfResources: shared memory");
}

// Through the worker: without cuobjdump the facts come from PTX, and say so.
TEST(CompiledFacts, FallsBackToPtxWithoutCuobjdump) {
  WorkerOptions o = test::workerOptions(false);
  o.env["TRITONFORGE_HIDE_TOOLS"] = "cuobjdump";
  WorkerProcess w(o);
  WorkerReply hello = w.ensureStarted();
  if (!hello.ok() || w.helloInfo()["triton"].is_null()) GTEST_SKIP() << "the worker's Python has no Triton";
  std::string missing;
  CompileRequest req = compileRequest((test::sourceDir() / "tests/corpus/vector_add.py").string(), "add_kernel",
                                      {"x_ptr", "y_ptr", "out_ptr", "n", "BLOCK"},
                                      {{"x_ptr", "*fp32"}, {"y_ptr", "*fp32"}, {"out_ptr", "*fp32"}, {"n", "i32"}},
                                      {{"n", 1 << 20}, {"BLOCK", 1024}}, {"BLOCK"}, {{"num_warps", 4}}, &missing);
  CompileReply r = WorkerClient(w).compile(req, std::chrono::milliseconds(120000));
  ASSERT_TRUE(r.ok()) << r.message;
  CompiledFacts f = parseCompiled(r);
  ASSERT_TRUE(f.instructions);
  EXPECT_EQ(f.instructions->from, "ptx");
  EXPECT_EQ(f.sass_missing, "cuobjdump was not found");
  EXPECT_EQ(f.instructions->global_loads, (std::map<int, int>{{128, 4}}));
  EXPECT_FALSE(f.registers.has_value());
  bool noted = false;
  for (const auto& n : f.notes) if (n.find("from PTX") != std::string::npos) noted = true;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace tf
