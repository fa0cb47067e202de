//===- LayerGradientTest.cpp - whole-layer gradients vs finite differences ===//
//
// Every layer kind built by the frontend, differentiated by dm-autodiff, with
// dropout ON (the mask is a fixed function of the seed, so the loss stays
// smooth and the backward must regenerate exactly the forward mask).
//
//===----------------------------------------------------------------------===//
#include "GradientCheck.h"

#include "compiler/Driver.h"
#include "compiler/LayerBuilder.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

struct LayerCase {
  const char *name;
  const char *json;
};

void PrintTo(const LayerCase &c, std::ostream *os) { *os << c.name; }

#define SIZES "\"batch\": 2, \"seq\": 3, \"hidden\": 8, \"heads\": 2, \"ffn\": 6, "
#define DROPOUT "\"dropout\": {\"attention\": 0.2, \"hidden\": 0.1, \"activation\": 0.15}, "

const LayerCase kLayers[] = {
    {"encoder_post", "{\"kind\": \"encoder\", " SIZES DROPOUT "\"norm\": \"post\"}"},
    {"encoder_pre_keypad",
     "{\"kind\": \"encoder\", " SIZES DROPOUT
     "\"norm\": \"pre\", \"key_padding\": true, \"activation\": \"gelu_tanh\"}"},
    {"encoder_no_bias_relu",
     "{\"kind\": \"encoder\", " SIZES DROPOUT "\"bias\": false, \"activation\": \"relu\"}"},
    {"decoder_post", "{\"kind\": \"decoder\", " SIZES DROPOUT "\"memory_seq\": 4}"},
    {"decoder_pre_keypad",
     "{\"kind\": \"decoder\", " SIZES DROPOUT
     "\"memory_seq\": 5, \"norm\": \"pre\", \"key_padding\": true}"},
    {"gpt_pre", "{\"kind\": \"gpt\", " SIZES DROPOUT "\"norm\": \"pre\"}"},
    {"gpt_head_dim", "{\"kind\": \"gpt\", " SIZES DROPOUT "\"head_dim\": 3}"},
    {"decoder_stack_of_two",
     "{\"kind\": \"decoder\", " SIZES DROPOUT "\"memory_seq\": 4, \"layers\": 2}"},
};

class LayerGradient : public ::testing::TestWithParam<LayerCase> {};

TEST_P(LayerGradient, MatchesCentralDifferences) {
  auto config = dmc::parseModelConfig(GetParam().json, GetParam().name);
  ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = dmc::buildForwardGraph(ctx, *config);
  auto r = dmc::test::checkGradients(*module, /*samplesPerArg=*/20, /*seed=*/3);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_GT(r.checked, 60);
  EXPECT_LT(r.worstError, 1e-6) << r.worstWhere;
}

INSTANTIATE_TEST_SUITE_P(EveryKind, LayerGradient, ::testing::ValuesIn(kLayers),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
