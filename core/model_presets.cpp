// The preset catalog. Every dimension comes from the paper or the released configuration
// named beside it.
#include "core/model_presets.h"

namespace stratasim {
namespace {

ModelSpec Transformer(const char* kind, const char* name, int layers, int hidden, int heads,
                      int sequence, int vocabulary, int kv_heads = 0, int ffn_hidden = 0) {
  ModelSpec m;
  m.kind = kind;
  m.preset = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.sequence = sequence;
  m.vocabulary = vocabulary;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn_hidden;
  return m;
}

ModelSpec Cnn(const char* kind) {
  ModelSpec m;
  m.kind = kind;
  m.preset = kind;
  m.image_size = 224;  // ImageNet training crops (He et al. 2016; Simonyan & Zisserman 2015)
  m.classes = 1000;    // ImageNet-1k
  return m;
}

ModelSpec Sage(const char* name, std::vector<int> fanouts, int feature_dim, int classes,
               double vertices, double degree) {
  ModelSpec m;
  m.kind = "graphsage";
  m.preset = name;
  m.fanouts = std::move(fanouts);
  m.layers = static_cast<int>(m.fanouts.size());
  m.hidden = 256;
  m.feature_dim = feature_dim;
  m.classes = classes;
  m.graph_vertices = vertices;
  m.graph_degree = degree;
  return m;
}

constexpr int kGptVocabulary = 50257;
constexpr int kBertVocabulary = 30522;     // BERT's uncased WordPiece vocabulary (released config)
constexpr int kLlama2Vocabulary = 32000;   // Touvron et al. 2023, SentencePiece BPE, 32k tokens
constexpr int kLlama3Vocabulary = 128256;  // Dubey et al. 2024: 128K tokens (released config)

std::vector<ModelSpec> MakePresets() {
  return {
      // GPT-2: Radford et al. 2019, "Language Models are Unsupervised Multitask Learners",
      // Table 2 (layers, d_model; 64-dimensional heads, 1024-token context, 50,257-token BPE).
      Transformer("gpt", "gpt2-small", 12, 768, 12, 1024, kGptVocabulary),
      Transformer("gpt", "gpt2-medium", 24, 1024, 16, 1024, kGptVocabulary),
      Transformer("gpt", "gpt2-large", 36, 1280, 20, 1024, kGptVocabulary),
      Transformer("gpt", "gpt2-xl", 48, 1600, 25, 1024, kGptVocabulary),
      // GPT-3: Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (n_layers,
      // d_model, n_heads; 2048-token context; GPT-2's vocabulary). Two entries do not multiply
      // out and we keep d_head: GPT-3 XL (1.3B) lists 24 heads of 128 for d_model 2048, kept
      // as 16 x 128; GPT-3 13B lists d_model 5140, kept as 40 x 128 = 5120.
      Transformer("gpt", "gpt3-125m", 12, 768, 12, 2048, kGptVocabulary),
      Transformer("gpt", "gpt3-350m", 24, 1024, 16, 2048, kGptVocabulary),
      Transformer("gpt", "gpt3-760m", 24, 1536, 16, 2048, kGptVocabulary),
      Transformer("gpt", "gpt3-1.3b", 24, 2048, 16, 2048, kGptVocabulary),
      Transformer("gpt", "gpt3-2.7b", 32, 2560, 32, 2048, kGptVocabulary),
      Transformer("gpt", "gpt3-6.7b", 32, 4096, 32, 2048, kGptVocabulary),
      Transformer("gpt", "gpt3-13b", 40, 5120, 40, 2048, kGptVocabulary),
      Transformer("gpt", "gpt3-175b", 96, 12288, 96, 2048, kGptVocabulary),
      // BERT: Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers",
      // Section 3 (BASE: L=12, H=768, A=12; LARGE: L=24, H=1024, A=16); 512 positions.
      Transformer("bert", "bert-base", 12, 768, 12, 512, kBertVocabulary),
      Transformer("bert", "bert-large", 24, 1024, 16, 512, kBertVocabulary),
      // Llama 2: Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat Models",
      // Table 1 (4k context; grouped-query attention for 70B) with the layers, heads, KV heads
      // and SwiGLU widths of the released configurations (intermediate_size).
      Transformer("llama", "llama2-7b", 32, 4096, 32, 4096, kLlama2Vocabulary, 32, 11008),
      Transformer("llama", "llama2-13b", 40, 5120, 40, 4096, kLlama2Vocabulary, 40, 13824),
      Transformer("llama", "llama2-70b", 80, 8192, 64, 4096, kLlama2Vocabulary, 8, 28672),
      // Llama 3 8B: Dubey et al. 2024, "The Llama 3 Herd of Models", Table 3 (32 layers, model
      // dimension 4096, FFN dimension 14,336, 32 heads, 8 key/value heads), 8K context.
      Transformer("llama", "llama3-8b", 32, 4096, 32, 8192, kLlama3Vocabulary, 8, 14336),
      Cnn("resnet50"),
      Cnn("vgg16"),
      // Reddit: Hamilton et al. 2017, "Inductive Representation Learning on Large Graphs"
      // (232,965 posts, average degree 492, K = 2 hops sampling S1 = 25 and S2 = 10); 602
      // features and 41 classes as the released dataset has them (DGL RedditDataset).
      Sage("graphsage-reddit", {25, 10}, 602, 41, 232965, 492),
      // ogbn-products: Hu et al. 2020, "Open Graph Benchmark", 2,449,029 vertices, 61,859,140
      // undirected edges (mean degree 50.5), 100 features, 47 classes; fan-outs 15/10/5 as in
      // OGB's GraphSAGE mini-batch example.
      Sage("graphsage-products", {15, 10, 5}, 100, 47, 2449029, 50.5),
  };
}

const std::vector<ModelSpec>& Presets() {
  static const std::vector<ModelSpec> presets = MakePresets();
  return presets;
}

}  // namespace

std::string_view ToString(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

const std::vector<std::string>& ModelKinds() {
  static const std::vector<std::string> kinds = {"gpt",      "bert",  "llama",    "moe",
                                                 "resnet50", "vgg16", "graphsage"};
  return kinds;
}

bool IsTransformerKind(std::string_view kind) {
  return kind == "gpt" || kind == "bert" || kind == "llama" || kind == "moe";
}

const ModelSpec* FindModelPreset(std::string_view name) {
  for (const ModelSpec& m : Presets()) {
    if (m.preset == name) return &m;
  }
  return nullptr;
}

std::vector<std::string> ModelPresetNames() {
  std::vector<std::string> names;
  for (const ModelSpec& m : Presets()) names.push_back(m.preset);
  return names;
}

}  // namespace stratasim
