//===- DatabaseTest.cpp - Reading, appending, rewriting; concurrent writers ===//
#include "Fixture.h"

#include "tuning-db/Codec.h"
#include "tuning-db/Database.h"

#include <set>
#include <sys/wait.h>

namespace dmc::tuningdb::test {
namespace {

using TuningDbFile = ScratchDir;

std::string lines(std::initializer_list<int> variants) {
  std::string s;
  for (int v : variants)
    s += encodeLine(kernel(v)) + "\n";
  return s;
}

std::string torn() { return encodeLine(kernel(99)).substr(0, 60); }

TEST_F(TuningDbFile, TornLastLineIsIgnoredWithAWarning) {
  write(path("db.jsonl"), lines({1}) + "\n" + lines({2}) + torn());
  Database db;
  std::string error;
  std::vector<std::string> warnings;
  ASSERT_TRUE(db.load(path("db.jsonl"), false, error, warnings)) << error;
  EXPECT_EQ(db.records().size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].find(path("db.jsonl") + ":4: expected one JSON object"), 0u)
      << warnings[0];
  EXPECT_NE(warnings[0].find("ignored: a torn last line"), std::string::npos);
}

TEST_F(TuningDbFile, TornMiddleLineIsAnError) {
  write(path("db.jsonl"), lines({1}) + torn() + "\n" + lines({2}));
  Database db;
  std::string error;
  std::vector<std::string> warnings;
  EXPECT_FALSE(db.load(path("db.jsonl"), false, error, warnings));
  EXPECT_EQ(error.find(path("db.jsonl") + ":2: expected one JSON object"), 0u) << error;
  // So is a bad last line that has its newline: a writer finished it.
  write(path("db.jsonl"), lines({1}) + torn() + "\n");
  EXPECT_FALSE(Database().load(path("db.jsonl"), false, error, warnings));
  EXPECT_EQ(error.find(path("db.jsonl") + ":2: "), 0u) << error;
}

TEST_F(TuningDbFile, MissingFileIsEmptyOnlyWhenAsked) {
  Database db;
  std::string error;
  std::vector<std::string> warnings;
  EXPECT_TRUE(db.load(path("none.jsonl"), true, error, warnings));
  EXPECT_TRUE(db.records().empty());
  EXPECT_FALSE(db.load(path("none.jsonl"), false, error, warnings));
  EXPECT_EQ(error, path("none.jsonl") + ": no such file");
  EXPECT_FALSE(rewrite(path("none.jsonl"), false, [](auto &, auto &) { return true; }, error,
                       warnings));
  EXPECT_EQ(access(path("none.jsonl").c_str(), F_OK), -1);
}

TEST_F(TuningDbFile, AppendAfterATornTailKeepsOldAndNewRecords) {
  write(path("db.jsonl"), lines({1, 2}) + torn());
  std::string error;
  std::vector<std::string> warnings;
  ASSERT_TRUE(append(path("db.jsonl"), kernel(3), true, error, warnings)) << error;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("removed a torn last line (60 bytes"), std::string::npos)
      << warnings[0];
  Database db;
  warnings.clear();
  ASSERT_TRUE(db.load(path("db.jsonl"), false, error, warnings)) << error;
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(db.records().size(), 3u);
  for (int v : {1, 2, 3})
    EXPECT_NE(db.find(key(kernel(v))), nullptr) << v;
  EXPECT_EQ(read(path("db.jsonl")), lines({1, 2, 3}));
}

TEST_F(TuningDbFile, AppendKeepsACompleteLastRecordWithoutItsNewline) {
  std::string one = lines({1});
  write(path("db.jsonl"), one.substr(0, one.size() - 1));
  std::string error;
  std::vector<std::string> warnings;
  ASSERT_TRUE(append(path("db.jsonl"), kernel(2), false, error, warnings)) << error;
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(read(path("db.jsonl")), lines({1, 2}));
}

TEST_F(TuningDbFile, FindReturnsTheBetterOfTwoRecordsWithOneKey) {
  Database db;
  Record fewer = kernel(1, 30.0), more = kernel(1, 35.0), faster = kernel(1, 20.0);
  fewer.samples = 10;
  more.samples = 40;
  faster.samples = 40;
  faster.rejected = true;
  faster.reason = "wrong output";
  for (const Record &r : {fewer, more, faster})
    db.add(r);
  ASSERT_NE(db.find(key(more)), nullptr);
  EXPECT_EQ(db.find(key(more))->medianUs, 35.0);
  EXPECT_EQ(db.find(key(kernel(2))), nullptr);
}

// 8 processes append 200 records each while a 9th rewrites the file again and
// again (as prune does): every line must parse and no record may be lost, so
// appends must not interleave, nor land in a file a rewrite has replaced.
TEST_F(TuningDbFile, ConcurrentWritersLoseAndTearNothing) {
  const int writers = 8, each = 200;
  std::string db = path("db.jsonl");
  std::vector<pid_t> children;
  for (int w = 0; w <= writers; ++w) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string error;
      std::vector<std::string> warnings;
      bool ok = true;
      for (int i = 0; ok && w < writers && i < each; ++i)
        ok = append(db, kernel(w * each + i), false, error, warnings);
      for (int i = 0; ok && w == writers && i < 20; ++i)
        ok = rewrite(db, true, [](auto &, auto &) { return true; }, error, warnings);
      if (!ok)
        std::fprintf(stderr, "child %d: %s\n", w, error.c_str());
      _exit(ok && warnings.empty() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string text = read(db), error;
  std::vector<Record> records;
  std::vector<std::string> warnings;
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), writers * each);
  ASSERT_TRUE(parseDatabase(text, db, records, error, warnings)) << error;
  EXPECT_TRUE(warnings.empty());
  std::set<std::string> keys;
  for (const Record &r : records)
    keys.insert(key(r));
  for (int v = 0; v < writers * each; ++v)
    EXPECT_TRUE(keys.count(key(kernel(v)))) << "record " << v << " lost";
}

} // namespace
} // namespace dmc::tuningdb::test
