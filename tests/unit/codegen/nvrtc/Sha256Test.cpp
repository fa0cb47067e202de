//===- Sha256Test.cpp - SHA-256 against FIPS 180-4 vectors ----------------===//

#include "codegen/nvrtc/Sha256.h"

#include <gtest/gtest.h>

#include <string>

using dmcgen::Sha256;

namespace {

std::string sha(const std::string &s) {
  return Sha256::hex(Sha256::of(s.data(), s.size()));
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalMatchesOneShot) {
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text += char('a' + i % 26);
  for (size_t split : {0, 1, 55, 56, 63, 64, 65, 127, 999}) {
    Sha256 h;
    h.update(text.substr(0, split));
    h.update(text.substr(split));
    EXPECT_EQ(Sha256::hex(h.finish()), sha(text)) << "split at " << split;
  }
}

TEST(Sha256, FieldsAreUnambiguous) {
  Sha256 a, b;
  a.updateField("ab");
  a.updateField("c");
  b.updateField("a");
  b.updateField("bc");
  EXPECT_NE(Sha256::hex(a.finish()), Sha256::hex(b.finish()));
}

} // namespace
