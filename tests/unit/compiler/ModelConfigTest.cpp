//===- ModelConfigTest.cpp - model.json parsing and its error messages ----===//
#include "compiler/ModelConfig.h"

#include <gtest/gtest.h>

namespace {

using dmc::parseModelConfig;

/// The message of parsing `json`, which must fail.
std::string errorOf(const std::string &json) {
  auto config = parseModelConfig(json, "m.json");
  if (config)
    return "(no error)";
  return llvm::toString(config.takeError());
}

const char *kBase = R"("kind": "encoder", "batch": 2, "seq": 7, "hidden": 48, "heads": 4, "ffn": 80)";

std::string with(const std::string &extra) { return std::string("{") + kBase + extra + "}"; }

TEST(ModelConfig, ParsesDefaultsPerKind) {
  auto enc = parseModelConfig(with(""), "m.json");
  ASSERT_TRUE(static_cast<bool>(enc)) << llvm::toString(enc.takeError());
  EXPECT_EQ(enc->headDim, 12);
  EXPECT_EQ(enc->activation, "gelu");
  EXPECT_FALSE(enc->preNorm);
  EXPECT_EQ(enc->dtype, dmrt::DType::BF16);
  EXPECT_TRUE(enc->bias);

  auto gpt = parseModelConfig(
      R"({"kind": "gpt", "batch": 1, "seq": 4, "hidden": 8, "heads": 2, "ffn": 8, "dropout": 0.1})",
      "g.json");
  ASSERT_TRUE(static_cast<bool>(gpt)) << llvm::toString(gpt.takeError());
  EXPECT_TRUE(gpt->preNorm);
  EXPECT_EQ(gpt->activation, "gelu_tanh");
  EXPECT_DOUBLE_EQ(gpt->dropoutAttention, 0.1);
  EXPECT_DOUBLE_EQ(gpt->dropoutActivation, 0.1);
}

TEST(ModelConfig, ParsesEveryExplicitField) {
  auto c = parseModelConfig(
      R"({"name": "t", "kind": "decoder", "batch": 3, "seq": 5, "memory_seq": 6,
          "hidden": 20, "heads": 4, "head_dim": 7, "ffn": 30, "activation": "relu",
          "norm": "pre", "dropout": {"attention": 0.1, "hidden": 0.2, "activation": 0.3},
          "layernorm_eps": 1e-6, "bias": false, "key_padding": true, "dtype": "f16"})",
      "d.json");
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->kind, dmc::LayerKind::Decoder);
  EXPECT_EQ(c->memorySeq, 6);
  EXPECT_EQ(c->headDim, 7);
  EXPECT_DOUBLE_EQ(c->dropoutHidden, 0.2);
  EXPECT_DOUBLE_EQ(c->layernormEps, 1e-6);
  EXPECT_FALSE(c->bias);
  EXPECT_TRUE(c->keyPadding);
  EXPECT_EQ(c->dtype, dmrt::DType::F16);
}

struct BadCase {
  const char *name;
  std::string json;
  const char *message; ///< a substring of the expected error
};

void PrintTo(const BadCase &c, std::ostream *os) { *os << c.name; }

std::vector<BadCase> badCases() {
  return {
      {"malformed_json", "{\n  \"kind\": \"encoder\",\n  \"batch\": 2,,\n}",
       "m.json:3:14: malformed JSON"},
      {"not_an_object", "[1, 2]", "m.json: the model description must be a JSON object"},
      {"unknown_key_suggests", with(R"(, "hiden": 3)"),
       "m.json: unknown field 'hiden'; did you mean 'hidden'?"},
      {"unknown_key_lists", with(R"(, "zzzzzzzzzz": 3)"),
       "unknown field 'zzzzzzzzzz'; valid fields are name description kind"},
      {"unknown_dropout_key", with(R"(, "dropout": {"atention": 0.1})"),
       "in 'dropout': unknown field 'atention'; did you mean 'attention'?"},
      {"missing_kind", R"({"batch": 2, "seq": 7, "hidden": 48, "heads": 4, "ffn": 80})",
       "missing required field 'kind'"},
      {"bad_kind", R"({"kind": "lstm", "batch": 2, "seq": 7, "hidden": 48, "heads": 4, "ffn": 80})",
       "field 'kind' is \"lstm\"; expected one of \"encoder\", \"decoder\", \"gpt\""},
      {"missing_ffn", R"({"kind": "encoder", "batch": 2, "seq": 7, "hidden": 48, "heads": 4})",
       "missing required field 'ffn'"},
      {"zero_batch", R"({"kind": "encoder", "batch": 0, "seq": 7, "hidden": 48, "heads": 4, "ffn": 80})",
       "field 'batch' is 0; it must be between 1 and 65536"},
      {"negative_seq", R"({"kind": "encoder", "batch": 2, "seq": -7, "hidden": 48, "heads": 4, "ffn": 80})",
       "field 'seq' is -7; it must be between 1 and"},
      {"fractional_hidden", R"({"kind": "encoder", "batch": 2, "seq": 7, "hidden": 48.5, "heads": 4, "ffn": 80})",
       "field 'hidden' must be an integer, got 48.5"},
      {"string_heads", R"({"kind": "encoder", "batch": 2, "seq": 7, "hidden": 48, "heads": "4", "ffn": 80})",
       "field 'heads' must be an integer, got \"4\""},
      {"hidden_not_divisible", R"({"kind": "encoder", "batch": 2, "seq": 7, "hidden": 50, "heads": 4, "ffn": 80})",
       "field 'hidden' (50) is not divisible by field 'heads' (4)"},
      {"absurd_sizes", R"({"kind": "encoder", "batch": 65536, "seq": 1048576, "hidden": 48, "heads": 4, "ffn": 80})",
       "sizes are absurd"},
      {"decoder_without_memory", R"({"kind": "decoder", "batch": 2, "seq": 7, "hidden": 48, "heads": 4, "ffn": 80})",
       "a decoder needs field 'memory_seq'"},
      {"memory_on_encoder", with(R"(, "memory_seq": 5)"),
       "field 'memory_seq' applies to decoder layers only, not encoder"},
      {"bad_activation", with(R"(, "activation": "swish")"),
       "field 'activation' is \"swish\"; expected one of \"gelu\", \"gelu_tanh\", \"relu\""},
      {"bad_norm", with(R"(, "norm": "sandwich")"), "field 'norm' is \"sandwich\""},
      {"bad_dtype", with(R"(, "dtype": "fp8")"), "field 'dtype' is \"fp8\""},
      {"old_dtype_spelling", with(R"(, "dtype": "fp16")"), R"(expected one of "bf16", "f16", "f32")"},
      {"dropout_one", with(R"(, "dropout": 1.0)"), "field 'dropout' is 1; it must be a number in [0, 1)"},
      {"dropout_negative", with(R"(, "dropout": {"hidden": -0.1})"),
       "field 'dropout.hidden' is -0.1; it must be a number in [0, 1)"},
      {"eps_zero", with(R"(, "layernorm_eps": 0)"), "field 'layernorm_eps' is 0; it must be a number in (0, 1)"},
      {"bias_not_bool", with(R"(, "bias": "yes")"), "field 'bias' must be true or false"},
      {"zero_layers", with(R"(, "layers": 0)"), "field 'layers' is 0; it must be between 1 and 1024"},
      {"empty_name", with(R"(, "name": "")"), "field 'name' must be a non-empty string"},
  };
}

class BadModel : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadModel, IsRejectedNamingTheProblem) {
  std::string message = errorOf(GetParam().json);
  EXPECT_NE(message.find(GetParam().message), std::string::npos)
      << "expected a message containing:\n  " << GetParam().message << "\ngot:\n  " << message;
}

INSTANTIATE_TEST_SUITE_P(Rejections, BadModel, ::testing::ValuesIn(badCases()),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(ModelConfig, MissingFileNamesIt) {
  auto c = dmc::loadModelConfig("/nonexistent/model.json");
  ASSERT_FALSE(static_cast<bool>(c));
  std::string m = llvm::toString(c.takeError());
  EXPECT_NE(m.find("/nonexistent/model.json: cannot read"), std::string::npos) << m;
}

} // namespace
