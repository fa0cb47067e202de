//===- ToolTest.cpp - dmc-db merge, prune, export and show, end to end ----===//
#include "Fixture.h"

#include "tuning-db/Codec.h"
#include "tuning-db/Database.h"

#include <sys/wait.h>

namespace dmc::tuningdb::test {
namespace {

struct TuningDbTool : ScratchDir {
  /// Runs dmc-db with `args`; its stdout and stderr go to `out`.
  int run(const std::string &args, std::string &out) {
    FILE *p = popen((std::string(DMC_DB_BINARY) + " " + args + " 2>&1").c_str(), "r");
    char buf[4096];
    out.clear();
    for (size_t n; p && (n = fread(buf, 1, sizeof buf, p)) > 0;)
      out.append(buf, n);
    int status = p ? pclose(p) : -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void put(const std::string &name, const std::vector<Record> &records) {
    std::string text;
    for (const Record &r : records)
      text += encodeLine(r) + "\n";
    write(path(name), text);
  }
  std::vector<Record> get(const std::string &name) {
    Database db;
    std::string error;
    std::vector<std::string> warnings;
    EXPECT_TRUE(db.load(path(name), false, error, warnings)) << error;
    return db.records();
  }
};

TEST_F(TuningDbTool, MergeKeepsOneRecordPerKeyPreferringMoreSamples) {
  Record few = kernel(1, 10.0), many = kernel(1, 12.0);
  few.samples = 10;
  many.samples = 20;
  put("a.jsonl", {few, kernel(2)});
  put("b.jsonl", {many, kernel(3)});
  std::string out;
  ASSERT_EQ(run("merge " + path("out.jsonl") + " " + path("a.jsonl") + " " + path("b.jsonl"),
                out), 0) << out;
  EXPECT_NE(out.find("4 records from 2 files into " + path("out.jsonl") + ": 3 new, 1 "
                     "duplicate (1 of them replaced"), std::string::npos) << out;
  std::vector<Record> merged = get("out.jsonl");
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].samples, 20);
  ASSERT_EQ(run("merge " + path("out.jsonl") + " " + path("a.jsonl"), out), 0) << out;
  EXPECT_NE(out.find("0 new, 2 duplicate (0 of them"), std::string::npos) << out;
  EXPECT_EQ(get("out.jsonl").size(), 3u);
}

TEST_F(TuningDbTool, PruneKeepBestKeepsTheFastestOfEachProblem) {
  std::vector<Record> records;
  for (double median : {5.0, 3.0, 4.0, 1.0, 2.0})
    records.push_back(kernel((int)median, median));
  records.push_back(kernel(9, 0.5));
  records.back().rejected = true;
  records.back().reason = "wrong output";
  records.push_back(kernel(8, 7.0));
  records.back().sizes["b"] = 16; // another problem
  put("db.jsonl", records);
  std::string out;
  ASSERT_EQ(run("prune " + path("db.jsonl") + " --keep-best 2", out), 0) << out;
  EXPECT_NE(out.find("removed 3 records (3 beyond the best 2 of their problem); 4 left"),
            std::string::npos) << out;
  std::vector<double> medians;
  for (const Record &r : get("db.jsonl"))
    medians.push_back(r.medianUs);
  EXPECT_EQ(medians, (std::vector<double>{1.0, 2.0, 0.5, 7.0}));
  ASSERT_EQ(run("prune " + path("db.jsonl") + " --rejected --older-than 2025-06-01", out), 0);
  EXPECT_NE(out.find("removed 1 records (0 older than 2025-06-01, 1 rejected by the tuner)"),
            std::string::npos) << out;
  ASSERT_EQ(run("prune " + path("db.jsonl") + " --older-than 2025-06-02", out), 0);
  EXPECT_TRUE(get("db.jsonl").empty());
}

TEST_F(TuningDbTool, PruneByDevice) {
  std::vector<Record> records = {kernel(1), kernel(2)};
  records[1].device.name = "NVIDIA H200";
  put("db.jsonl", records);
  std::string out;
  ASSERT_EQ(run("prune " + path("db.jsonl") + " --device 'NVIDIA H200'", out), 0) << out;
  ASSERT_EQ(get("db.jsonl").size(), 1u);
  EXPECT_EQ(get("db.jsonl")[0].device.name, h100().name);
}

TEST_F(TuningDbTool, PruneStaleCodegen) {
  std::vector<Record> records = {kernel(1), kernel(2), kernel(3)};
  const int64_t now = software().codegen; // the plain kernels' version
  records[1].software.codegen = now - 1;
  // A contraction at the plain kernels' version is stale only if its own
  // family's version differs; at its own family's version it stays.
  Record gemm = kernel(4);
  gemm.kind = Kind::Contraction;
  gemm.signature = "contraction bik,bkj->bij";
  gemm.knobs.clear();
  gemm.algorithm = "heuristic";
  gemm.epilogue = "none";
  gemm.software.codegen = codegenVersion(gemm.kind, gemm.signature);
  records.push_back(gemm);
  put("db.jsonl", records);
  std::string out;
  ASSERT_EQ(run("prune " + path("db.jsonl") + " --stale-codegen", out), 0) << out;
  EXPECT_NE(out.find("removed 1 records (1 of another codegen version than their family's (" +
                     describeCodegenVersions() + ")); 3 left"),
            std::string::npos) << out;
  for (const Record &r : get("db.jsonl"))
    EXPECT_EQ(r.software.codegen, codegenVersion(r.kind, r.signature));
}

TEST_F(TuningDbTool, PruneBySignatureAndKnob) {
  // The records of one kernel's candidates with a knob value (the ones a code
  // change to that variant made stale), and no other.
  Record a = kernel(1), b = kernel(2), other = kernel(3);
  a.knobs["wgmma"] = int64_t(1);
  other.signature = "kernel other(bhj->bhj)";
  other.knobs["wgmma"] = int64_t(1);
  put("db.jsonl", {a, b, other});
  std::string out;
  ASSERT_EQ(run("prune " + path("db.jsonl") + " --signature '" + a.signature + "' --knob wgmma=1",
                out), 0) << out;
  EXPECT_NE(out.find("removed 1 records (1 of " + a.signature + " with wgmma=1); 2 left"),
            std::string::npos) << out;
  std::vector<Record> left = get("db.jsonl");
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(key(left[0]), key(b));
  EXPECT_EQ(key(left[1]), key(other));
  // Without --knob, every record of the signature.
  ASSERT_EQ(run("prune " + path("db.jsonl") + " --signature '" + b.signature + "'", out), 0);
  EXPECT_EQ(get("db.jsonl").size(), 1u);
  // Usage errors say what is missing.
  EXPECT_EQ(run("prune " + path("db.jsonl") + " --knob wgmma=1", out), 2);
  EXPECT_NE(out.find("--knob needs --signature"), std::string::npos) << out;
  EXPECT_EQ(run("prune " + path("db.jsonl") + " --signature x --knob wgmma", out), 2);
  EXPECT_NE(out.find("--knob needs NAME=VALUE (e.g. wgmma=1), got \"wgmma\""),
            std::string::npos) << out;
}

TEST_F(TuningDbTool, ExportParsesBack) {
  put("db.jsonl", {kernel(1), kernel(2)});
  std::string out, error;
  ASSERT_EQ(run("export " + path("db.jsonl") + " -o " + path("x.json"), out), 0) << out;
  std::vector<Record> back;
  ASSERT_TRUE(decodeExport(read(path("x.json")), path("x.json"), back, error)) << error;
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(key(back[1]), key(kernel(2)));
}

TEST_F(TuningDbTool, ShowTabulatesAndDataErrorsNameFileAndLine) {
  put("db.jsonl", {kernel(1, 9.0), kernel(2, 4.0)});
  std::string out;
  ASSERT_EQ(run("show " + path("db.jsonl"), out), 0) << out;
  EXPECT_NE(out.find("kernel  2        4.00"), std::string::npos) << out;
  EXPECT_NE(out.find("knobs {lane_dim=k, variant=2}"), std::string::npos) << out;
  EXPECT_NE(out.find("2 records (0 rejected by the tuner) in 1 problems; devices: NVIDIA "
                     "H100 80GB HBM3 9.0 (2)"), std::string::npos) << out;
  write(path("bad.jsonl"), encodeLine(kernel(1)) + "\n{\"format\":1}\n");
  EXPECT_EQ(run("show " + path("bad.jsonl"), out), 1);
  EXPECT_NE(out.find(path("bad.jsonl") + ":2: format: expected a string"), std::string::npos)
      << out;
  EXPECT_EQ(run("merge " + path("out.jsonl") + " " + path("bad.jsonl"), out), 1);
  EXPECT_EQ(access(path("out.jsonl").c_str(), F_OK), -1) << "merge wrote despite the error";
}

TEST_F(TuningDbTool, StepSaysWhatIsWrong) {
  std::string out;
  EXPECT_EQ(run("step", out), 2);
  EXPECT_NE(out.find("dmc-db: step takes one bundle directory"), std::string::npos) << out;
  EXPECT_EQ(run("step " + path("no.dmlib"), out), 1);
  EXPECT_NE(out.find(path("no.dmlib") + "/manifest.json: cannot read"), std::string::npos)
      << out;
  ASSERT_EQ(std::system(("mkdir -p " + path("bad.dmlib")).c_str()), 0);
  write(path("bad.dmlib") + "/manifest.json", "{}");
  write(path("bad.dmlib") + "/config.json", "{}");
  EXPECT_EQ(run("step " + path("bad.dmlib"), out), 1);
  EXPECT_NE(out.find(path("bad.dmlib") + "/manifest.json"), std::string::npos) << out;
}

} // namespace
} // namespace dmc::tuningdb::test
