// The transformer kinds: gpt, bert, llama and moe, with their presets. Every dimension comes
// from the paper or the released configuration named beside it.
#include <string>
#include <utility>
#include <vector>

#include "core/model_fields.h"
#include "core/model_kinds.h"

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

constexpr int kGptVocabulary = 50257;
constexpr int kBertVocabulary = 30522;     // BERT's uncased WordPiece vocabulary (released config)
constexpr int kLlama2Vocabulary = 32000;   // Touvron et al. 2023, SentencePiece BPE, 32k tokens
constexpr int kLlama3Vocabulary = 128256;  // Dubey et al. 2024: 128K tokens (released config)

// How the attention core runs, and whether it is causal (`causal_default` when not written).
void ReadAttention(const ModelFields& m, ModelSpec* spec, bool causal_default) {
  const yaml::Reader& r = m.reader();
  if (auto attention = m.Get("attention")) spec->attention = ReadAttentionChoice(r, *attention);
  spec->causal = causal_default;
  if (auto causal = m.Get("causal")) {
    // The spellings of YAML 1.2's core schema, as strategy options take them.
    const std::string v = r.String(*causal);
    if (v == "true" || v == "True" || v == "TRUE") {
      spec->causal = true;
    } else if (v == "false" || v == "False" || v == "FALSE") {
      spec->causal = false;
    } else {
      r.Fail(*causal, "must be true or false");
    }
  }
}

// The dimensions every transformer kind has: layers, hidden, heads, sequence, vocabulary,
// ffn_hidden.
void ReadDimensions(const ModelFields& m, ModelSpec* spec) {
  const std::pair<const char*, int*> dims[] = {{"layers", &spec->layers},
                                               {"hidden", &spec->hidden},
                                               {"heads", &spec->heads},
                                               {"sequence", &spec->sequence},
                                               {"vocabulary", &spec->vocabulary}};
  for (const auto& [key, target] : dims) m.Positive(key, target, "or name a preset");
  m.Positive("ffn_hidden", &spec->ffn_hidden, nullptr);
  if (spec->hidden % spec->heads != 0) {
    // Presets are consistent, so an override made it wrong: blame the field that was written.
    if (auto heads = m.Get("heads")) {
      m.reader().Fail(*heads, "must divide hidden (" + std::to_string(spec->hidden) + ")");
    }
    m.reader().Fail(*m.Get("hidden"),
                    "must be a multiple of heads (" + std::to_string(spec->heads) + ")");
  }
}

// A decoder (gpt; llama and moe through their readers): causal attention by default.
void ReadTransformer(const ModelFields& m, ModelSpec* spec) {
  ReadDimensions(m, spec);
  ReadAttention(m, spec, /*causal_default=*/true);
}

// gpt: sparse_embedding, token_distribution, zipf_exponent (docs/models.md, "Sparse embedding").
void ReadSparseEmbedding(const ModelFields& m, ModelSpec* spec) {
  const yaml::Reader& r = m.reader();
  if (auto sparse = m.Get("sparse_embedding")) {
    const std::string v = r.String(*sparse);
    if (v == "true" || v == "True" || v == "TRUE") {
      spec->sparse_embedding = true;
    } else if (v == "false" || v == "False" || v == "FALSE") {
      spec->sparse_embedding = false;
    } else {
      r.Fail(*sparse, "must be true or false");
    }
  }
  const auto distribution = m.Get("token_distribution");
  const auto exponent = m.Get("zipf_exponent");
  if (!spec->sparse_embedding) {
    if (distribution) r.Fail(*distribution, "only applies with sparse_embedding: true");
    if (exponent) r.Fail(*exponent, "only applies with sparse_embedding: true");
    return;
  }
  if (distribution) {
    spec->token_distribution = r.String(*distribution);
    if (spec->token_distribution != "zipf" && spec->token_distribution != "uniform") {
      r.Fail(*distribution, "must be one of: zipf, uniform");
    }
  }
  if (exponent) {
    if (spec->token_distribution != "zipf") {
      r.Fail(*exponent, "only applies with token_distribution: zipf");
    }
    spec->zipf_exponent = r.PositiveNumber(*exponent);
    // Beyond a few, nearly every draw is the most frequent token; natural text measures about 1
    // (Piantadosi 2014): the bound keeps p_k = k^-a / H(V, a) representable in a double.
    if (spec->zipf_exponent > 8) r.Fail(*exponent, "must be <= 8");
  }
}

void ReadGpt(const ModelFields& m, ModelSpec* spec) {
  ReadTransformer(m, spec);
  ReadSparseEmbedding(m, spec);
}

// BERT's encoder attends both ways.
void ReadBert(const ModelFields& m, ModelSpec* spec) {
  ReadDimensions(m, spec);
  ReadAttention(m, spec, /*causal_default=*/false);
}

// kv_heads (default: heads), which must divide heads.
void ReadKvHeads(const ModelFields& m, ModelSpec* spec) {
  m.Positive("kv_heads", &spec->kv_heads, nullptr);
  if (spec->kv_heads == 0) spec->kv_heads = spec->heads;
  if (spec->heads % spec->kv_heads != 0) {
    if (auto kv = m.Get("kv_heads")) {
      m.reader().Fail(*kv, "must divide heads (" + std::to_string(spec->heads) + ")");
    }
    m.reader().Fail(*m.Get("heads"),
                    "must be a multiple of kv_heads (" + std::to_string(spec->kv_heads) + ")");
  }
}

void ReadLlama(const ModelFields& m, ModelSpec* spec) {
  ReadTransformer(m, spec);
  ReadKvHeads(m, spec);
}

void ReadMoe(const ModelFields& m, ModelSpec* spec) {
  ReadTransformer(m, spec);
  const yaml::Reader& r = m.reader();
  // A borrowed GPT preset has no experts; an MoE preset (mixtral-8x7b) gives them.
  if (auto experts = m.Get("experts")) {
    spec->experts = r.Int(*experts, 1);
  } else if (spec->experts == 0) {
    spec->experts = r.Int(m.Require("experts", "kind moe needs it"), 1);
  }
  if (spec->top_k == 0) spec->top_k = 1;  // Switch Transformer routing (Fedus et al. 2022)
  if (auto top_k = m.Get("top_k")) spec->top_k = r.Int(*top_k, 1);
  if (spec->top_k > spec->experts) {
    if (auto top_k = m.Get("top_k")) {
      r.Fail(*top_k, "must be <= experts (" + std::to_string(spec->experts) + ")");
    }
    r.Fail(*m.Get("experts"), "must be >= top_k (" + std::to_string(spec->top_k) + ")");
  }
  // Fedus et al. 2022, Switch Transformer's training setting.
  if (spec->capacity_factor == 0) spec->capacity_factor = 1.25;
  if (auto cf = m.Get("capacity_factor")) spec->capacity_factor = r.PositiveNumber(*cf);
  if (spec->architecture.empty()) spec->architecture = "gpt";
  if (auto arch = m.Get("architecture")) {
    spec->architecture = r.String(*arch);
    if (spec->architecture != "gpt" && spec->architecture != "llama") {
      r.Fail(*arch, "must be one of: gpt, llama");
    }
  }
  if (spec->architecture == "llama") {
    ReadKvHeads(m, spec);
  } else if (auto kv = m.Get("kv_heads")) {
    r.Fail(*kv, "grouped-query attention needs architecture: llama");
  }
}

// A transformer kind's entry without its presets: the shared keys (ffn_hidden defaulting to
// `ffn_default`, causal to `causal_default`), then `extra` keys; its example is a two-layer
// model with `example_extra`.
ModelKind TransformerKind(const char* name, const char* ffn_default, const char* causal_default,
                          std::vector<ModelKey> extra, const std::string& example_extra,
                          void (*read)(const ModelFields&, ModelSpec*)) {
  ModelKind k;
  k.name = name;
  k.transformer = true;
  k.keys = {{"layers", "from the preset"},
            {"hidden", "from the preset"},
            {"heads", "from the preset"},
            {"sequence", "from the preset"},
            {"vocabulary", "from the preset"},
            {"ffn_hidden", ffn_default},
            {"attention", "flash"},
            {"causal", causal_default}};
  k.keys.insert(k.keys.end(), extra.begin(), extra.end());
  k.example = std::string("{kind: ") + name +
              ", layers: 2, hidden: 64, heads: 4, sequence: 32, vocabulary: 100" + example_extra +
              "}";
  k.read = read;
  return k;
}

}  // namespace

Attention ReadAttentionChoice(const yaml::Reader& r, const yaml::Field& f) {
  const std::string v = r.String(f);
  if (v == "flash") return Attention::kFlash;
  if (v != "unfused") r.Fail(f, "must be one of: flash, unfused");
  return Attention::kUnfused;
}

ModelKind GptModelKind() {
  ModelKind k = TransformerKind(
      "gpt", "4 * hidden", "true",
      {{"sparse_embedding", "false"}, {"token_distribution", "zipf"}, {"zipf_exponent", "1.0"}}, "",
      ReadGpt);
  k.presets = {
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
  };
  return k;
}

ModelKind BertModelKind() {
  ModelKind k = TransformerKind("bert", "4 * hidden", "false", {}, "", ReadBert);
  k.presets = {
      // BERT: Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers",
      // Section 3 (BASE: L=12, H=768, A=12; LARGE: L=24, H=1024, A=16); 512 positions.
      Transformer("bert", "bert-base", 12, 768, 12, 512, kBertVocabulary),
      Transformer("bert", "bert-large", 24, 1024, 16, 512, kBertVocabulary),
  };
  return k;
}

ModelKind LlamaModelKind() {
  ModelKind k = TransformerKind("llama", "256 * ceil((8 * hidden / 3) / 256)", "true",
                                {{"kv_heads", "heads"}}, ", kv_heads: 2", ReadLlama);
  k.presets = {
      // Llama 2: Touvron et al. 2023, "Llama 2: Open Foundation and Fine-Tuned Chat Models",
      // Table 1 (4k context; grouped-query attention for 70B) with the layers, heads, KV heads
      // and SwiGLU widths of the released configurations (intermediate_size).
      Transformer("llama", "llama2-7b", 32, 4096, 32, 4096, kLlama2Vocabulary, 32, 11008),
      Transformer("llama", "llama2-13b", 40, 5120, 40, 4096, kLlama2Vocabulary, 40, 13824),
      Transformer("llama", "llama2-70b", 80, 8192, 64, 4096, kLlama2Vocabulary, 8, 28672),
      // Llama 3: Dubey et al. 2024, "The Llama 3 Herd of Models", Table 3 (layers, model
      // dimension, FFN dimension, heads; 8 key/value heads for all three), 8K pre-training
      // context: 8B 32 x 4096 x 14,336 x 32; 70B 80 x 8192 x 28,672 x 64; 405B 126 x 16,384 x
      // 53,248 x 128.
      Transformer("llama", "llama3-8b", 32, 4096, 32, 8192, kLlama3Vocabulary, 8, 14336),
      Transformer("llama", "llama3-70b", 80, 8192, 64, 8192, kLlama3Vocabulary, 8, 28672),
      Transformer("llama", "llama3-405b", 126, 16384, 128, 8192, kLlama3Vocabulary, 8, 53248),
  };
  return k;
}

ModelKind MoeModelKind() {
  ModelKind k = TransformerKind("moe", "4 * hidden (architecture llama: as kind llama)", "true",
                                {{"experts", "required"},
                                 {"top_k", "1"},
                                 {"capacity_factor", "1.25"},
                                 {"architecture", "gpt"},
                                 {"kv_heads", "heads (architecture llama only)"}},
                                ", experts: 4", ReadMoe);
  k.presets_from = "gpt";  // a GPT preset gives the dense dimensions of a GPT-style MoE
  // Mixtral 8x7B: Jiang et al. 2024, "Mixtral of Experts", Table 1 (dim 4096, 32 layers,
  // head_dim 128, hidden_dim 14336, 32 heads, 8 kv heads, 32k context, vocabulary 32000,
  // 8 experts, top 2) and Section 2.1 (SwiGLU experts). Dropless: a capacity factor of 1 makes
  // the experts compute exactly top_k x tokens slots, the active parameters' FLOPs.
  ModelSpec mixtral =
      Transformer("moe", "mixtral-8x7b", 32, 4096, 32, 32768, kLlama2Vocabulary, 8, 14336);
  mixtral.experts = 8;
  mixtral.top_k = 2;
  mixtral.capacity_factor = 1.0;
  mixtral.architecture = "llama";
  k.presets = {mixtral};
  return k;
}

}  // namespace stratasim
