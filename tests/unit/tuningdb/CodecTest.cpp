//===- CodecTest.cpp - One record <-> one JSON line -----------------------===//
#include "Fixture.h"

#include "tuning-db/Codec.h"

#include <nlohmann/json.hpp>

#include <functional>

namespace dmc::tuningdb::test {
namespace {

using json = nlohmann::json;

Record contraction() {
  Record r = kernel(0, 12.25);
  r.kind = Kind::Contraction;
  r.signature = "contraction(bjk,kn->bjn):bf16";
  r.sizes = {{"b", 8}, {"j", 512}, {"k", 1024}, {"n", 4096}};
  r.layouts = {"bjk", "nk", "bjn"};
  r.knobs = {{"swap", 1}, {"negative", -3}};
  r.algorithm = "id=6 tile=128x256 stages=4 splitk=1 swizzle=0";
  r.epilogue = "bias_gelu";
  r.rejected = true;
  r.reason = "output differs from the default configuration's";
  r.samples = 7;
  return r;
}

TEST(TuningDbCodec, RoundTripsEveryField) {
  for (const Record &r : {kernel(3), contraction()}) {
    std::string line = encodeLine(r), error;
    EXPECT_EQ(line.find("{\"format\":\"dmc-tuning\",\"version\":1,\"device\":"), 0u) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos);
    Record back;
    ASSERT_TRUE(decodeLine(line, "db.jsonl:1", back, error)) << error;
    EXPECT_EQ(back.device.name, r.device.name);
    EXPECT_EQ(back.device.cc, r.device.cc);
    EXPECT_EQ(back.device.sms, r.device.sms);
    EXPECT_EQ(back.device.memClockKhz, r.device.memClockKhz);
    EXPECT_EQ(back.device.l2Bytes, r.device.l2Bytes);
    EXPECT_EQ(back.software.cuda, r.software.cuda);
    EXPECT_EQ(back.software.cublaslt, r.software.cublaslt);
    EXPECT_EQ(back.software.nvrtc, r.software.nvrtc);
    EXPECT_EQ(back.software.codegen, r.software.codegen);
    EXPECT_EQ(back.kind, r.kind);
    EXPECT_EQ(back.signature, r.signature);
    EXPECT_EQ(back.sizes, r.sizes);
    EXPECT_EQ(back.dtype, r.dtype);
    EXPECT_EQ(back.layouts, r.layouts);
    EXPECT_EQ(back.knobs, r.knobs);
    EXPECT_EQ(back.algorithm, r.algorithm);
    EXPECT_EQ(back.epilogue, r.epilogue);
    EXPECT_EQ(back.medianUs, r.medianUs);
    EXPECT_EQ(back.minUs, r.minUs);
    EXPECT_EQ(back.samples, r.samples);
    EXPECT_EQ(back.date, r.date);
    EXPECT_EQ(back.rejected, r.rejected);
    EXPECT_EQ(back.reason, r.reason);
    EXPECT_EQ(key(back), key(r));
    EXPECT_EQ(encodeLine(back), line);
  }
}

TEST(TuningDbCodec, EveryWholeStepMeasurementIsKept) {
  // A step record's date is part of its key: two measurements of one step
  // (other GPUs, other days) are two samples; the same one twice is one.
  Record a = kernel(1);
  a.kind = Kind::Step;
  a.algorithm = "";
  Record later = a, again = a;
  later.date = "2030-01-01T00:00:00Z";
  later.medianUs = a.medianUs * 1.02;
  EXPECT_NE(key(a), key(later));
  EXPECT_EQ(key(a), key(again));
  Record k1 = kernel(1), k2 = kernel(1); // a kernel's date is not: one candidate
  k2.date = later.date;
  EXPECT_EQ(key(k1), key(k2));
}

TEST(TuningDbCodec, KeyCoversTheCandidateNotTheMeasurement) {
  Record a = kernel(1), b = kernel(1, 99.0);
  b.samples = 3;
  b.date = "2030-01-01T00:00:00Z";
  EXPECT_EQ(key(a), key(b));
  for (auto change : std::vector<std::function<void(Record &)>>{
           [](Record &r) { r.device.name = "NVIDIA H200"; },
           [](Record &r) { r.software.cublaslt = 1; }, [](Record &r) { r.layouts[1] = "bhjk"; },
           [](Record &r) { r.knobs["variant"] = std::string("1"); },
           [](Record &r) { r.sizes["b"] = 16; }, [](Record &r) { r.dtype = "f16"; }}) {
    Record c = kernel(1);
    change(c);
    EXPECT_NE(key(c), key(a)) << encodeLine(c);
  }
}

struct Planted {
  const char *what;
  std::function<void(json &)> plant;
  const char *message;
};

TEST(TuningDbCodec, RejectsEachPlantedFaultNamingLineFieldAndValue) {
  std::vector<Planted> cases = {
      {"unknown field", [](json &o) { o["colour"] = 1; },
       "db.jsonl:7: colour: unknown field (allowed: format, version, device, software, kind, "
       "signature, sizes, dtype, layouts, knobs, algorithm, epilogue, median_us, min_us, "
       "samples, date, status, reason)"},
      {"unknown nested field", [](json &o) { o["device"]["clock"] = 1; },
       "db.jsonl:7: device.clock: unknown field (allowed: name, cc, sms, mem_clock_khz, "
       "l2_bytes)"},
      {"missing field", [](json &o) { o.erase("samples"); },
       "db.jsonl:7: samples: missing field"},
      {"missing nested field", [](json &o) { o["software"].erase("nvrtc"); },
       "db.jsonl:7: software.nvrtc: missing field"},
      {"wrong type", [](json &o) { o["device"]["sms"] = "132"; },
       "db.jsonl:7: device.sms: expected a positive integer, got string \"132\""},
      {"min > median", [](json &o) { o["min_us"] = 41.0; },
       "db.jsonl:7: min_us: expected at most median_us (40.5), got 41.0"},
      {"zero median", [](json &o) { o["median_us"] = 0; },
       "db.jsonl:7: median_us: expected a number > 0, got 0.0"},
      {"bad dtype", [](json &o) { o["dtype"] = "bf17"; },
       "db.jsonl:7: dtype: expected one of \"f64\", \"f32\", \"f16\", \"bf16\", \"i64\", "
       "\"i32\", \"u8\", \"bool\", got \"bf17\""},
      {"bad kind", [](json &o) { o["kind"] = "gemm"; },
       "db.jsonl:7: kind: expected one of \"kernel\", \"contraction\", \"transpose\", \"step\", got "
       "\"gemm\""},
      {"non-letter dim", [](json &o) { o["sizes"]["1"] = 8; },
       "db.jsonl:7: sizes: expected a dimension letter (a-z, A-Z) as key, got \"1\""},
      {"layout of unknown dims", [](json &o) { o["layouts"][1] = "bhxk"; },
       "db.jsonl:7: layouts[1]: expected dimension letters of sizes, each once (e.g. \"bjk\"), "
       "got string \"bhxk\""},
      {"knob of another type", [](json &o) { o["knobs"]["vec"] = true; },
       "db.jsonl:7: knobs.vec: expected an integer or a string, got boolean true"},
      {"algorithm on a kernel", [](json &o) { o["algorithm"] = "heuristic"; },
       "db.jsonl:7: algorithm: expected \"\" (only contractions have an algorithm), got "
       "\"heuristic\""},
      {"bad date", [](json &o) { o["date"] = "2025-13-01T00:00:00Z"; },
       "db.jsonl:7: date: expected an ISO 8601 UTC date \"YYYY-MM-DDTHH:MM:SSZ\", got "
       "\"2025-13-01T00:00:00Z\""},
      {"bad cc", [](json &o) { o["device"]["cc"] = "sm90"; },
       "db.jsonl:7: device.cc: expected a compute capability \"MAJOR.MINOR\", got \"sm90\""},
      {"bad status", [](json &o) { o["status"] = "failed"; },
       "db.jsonl:7: status: expected \"ok\" or \"rejected\", got \"failed\""},
      {"rejected without reason", [](json &o) { o["status"] = "rejected"; },
       "db.jsonl:7: reason: missing field"},
      {"reason on an ok record", [](json &o) { o["reason"] = "slow"; },
       "db.jsonl:7: reason: expected no reason for a record with status \"ok\", got string "
       "\"slow\""},
      {"other format", [](json &o) { o["format"] = "dmc-config"; },
       "db.jsonl:7: format: expected \"dmc-tuning\", got \"dmc-config\""},
      {"other version", [](json &o) { o["version"] = 2; },
       "db.jsonl:7: version: expected 1 (this dmc reads version 1), got 2"},
  };
  for (const Planted &c : cases) {
    json o = json::parse(encodeLine(kernel(0)));
    c.plant(o);
    Record r;
    std::string error;
    EXPECT_FALSE(decodeLine(o.dump(), "db.jsonl:7", r, error)) << c.what;
    EXPECT_EQ(error, c.message) << c.what;
  }
}

TEST(TuningDbCodec, RejectsTextThatIsNotJson) {
  Record r;
  std::string error;
  EXPECT_FALSE(decodeLine("{\"format\":\"dmc-tuning\",\"ver", "db.jsonl:2", r, error));
  EXPECT_EQ(error, "db.jsonl:2: expected one JSON object, got text that is not JSON: "
                   "\"{\\\"format\\\":\\\"dmc-tuning\\\",\\\"ver\"");
  EXPECT_FALSE(decodeLine("[1,2]", "db.jsonl:3", r, error));
  EXPECT_EQ(error, "db.jsonl:3: expected an object, got array [1,2]");
}

TEST(TuningDbCodec, ExportParsesBack) {
  std::vector<Record> records = {kernel(1), contraction(), kernel(2)}, back;
  std::string text = encodeExport(records), error;
  EXPECT_EQ(text.find("{\"format\":\"dmc-tuning-export\",\"version\":1,\"records\":["), 0u);
  ASSERT_TRUE(decodeExport(text, "x.json", back, error)) << error;
  ASSERT_EQ(back.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i)
    EXPECT_EQ(encodeLine(back[i]), encodeLine(records[i]));
  json doc = json::parse(text);
  doc["records"][1]["samples"] = -1;
  EXPECT_FALSE(decodeExport(doc.dump(), "x.json", back, error));
  EXPECT_EQ(error, "x.json: records[1].samples: expected a non-negative integer, got number -1");
}

} // namespace
} // namespace dmc::tuningdb::test
